// The endpoint list the leaf policies of this directory (ring_hash, least_request, weighted_round_robin) keep: one
// subchannel per endpoint (A61: over all its addresses), keyed by its first address (duplicates merged, weights
// added), kept across updates so connections and per-endpoint state (outstanding calls, weights) survive an EDS
// change. An endpoint whose address list changed is a new endpoint (A61 accepts that churn).

import type { ConnectivityState, LbEndpoint, LbHelper, Subchannel } from "../balancer/lb-policy.js";

export interface EndpointEntry<S> {
  /** The endpoint's first address. */
  readonly key: string;
  /** The endpoint as last given (the first of duplicates). */
  endpoint: LbEndpoint;
  /** The endpoint weight times its locality's weight, summed over duplicates. */
  weight: number;
  readonly subchannel: Subchannel;
  /** What the policy keeps per endpoint (its state as the policy sees it, counters, weights). */
  readonly data: S;
}

export interface EndpointSubchannels<S> {
  /** The current entries in endpoint order. */
  readonly entries: readonly EndpointEntry<S>[];
  /** Applies a new endpoint list; subchannels of endpoints gone are closed. Returns whether the set or a weight changed. */
  update(endpoints: readonly LbEndpoint[]): boolean;
  close(): void;
}

/**
 * `createData` makes the per-endpoint state of a new entry; `onState` runs after an entry's subchannel changed state
 * (never during `update`). Subchannels are created IDLE: whether to connect is the policy's choice.
 */
export function createEndpointSubchannels<S>(
  helper: LbHelper,
  createData: (key: string) => S,
  onState: (entry: EndpointEntry<S>, state: ConnectivityState) => void,
): EndpointSubchannels<S> {
  let entries: EndpointEntry<S>[] = [];
  const byKey = new Map<string, { entry: EndpointEntry<S>; addresses: string; unwatch: () => void }>();
  let closed = false;
  /** Entries whose subchannel last reported READY (to tell a lost connection from a backoff ending). */
  const ready = new WeakSet<EndpointEntry<S>>();

  return {
    get entries() {
      return entries;
    },
    update(endpoints) {
      const next: EndpointEntry<S>[] = [];
      const seen = new Map<string, EndpointEntry<S>>();
      let changed = false;
      const weights = new Map<string, number>();
      for (const endpoint of endpoints) {
        const key = endpoint.addresses[0];
        if (key === undefined) continue;
        const weight = endpoint.weight * (endpoint.locality?.weight ?? 1);
        const dup = seen.get(key);
        if (dup !== undefined) {
          weights.set(key, (weights.get(key) ?? 0) + weight);
          continue;
        }
        weights.set(key, weight);
        const addresses = endpoint.addresses.join(",");
        let slot = byKey.get(key);
        if (slot !== undefined && slot.addresses !== addresses) {
          slot.unwatch();
          slot.entry.subchannel.close();
          slot = undefined;
        }
        if (slot === undefined) {
          changed = true;
          const subchannel = helper.createEndpointSubchannel(endpoint);
          const entry: EndpointEntry<S> = { key, endpoint, weight, subchannel, data: createData(key) };
          const unwatch = subchannel.watch((state) => {
            if (closed || byKey.get(key)?.entry !== entry) return;
            // A failed or lost connection may mean the addresses changed (a DNS cluster resolves again).
            if (state === "TRANSIENT_FAILURE" || (state === "IDLE" && ready.has(entry))) helper.requestReresolution();
            if (state === "READY") ready.add(entry);
            else ready.delete(entry);
            onState(entry, state);
          });
          slot = { entry, addresses, unwatch };
          byKey.set(key, slot);
        }
        slot.entry.endpoint = endpoint;
        seen.set(key, slot.entry);
        next.push(slot.entry);
      }
      for (const entry of next) {
        const weight = weights.get(entry.key) ?? entry.weight;
        if (weight !== entry.weight) changed = true;
        entry.weight = weight;
      }
      for (const [key, slot] of byKey) {
        if (seen.has(key)) continue;
        changed = true;
        slot.unwatch();
        slot.entry.subchannel.close();
        byKey.delete(key);
      }
      if (next.length !== entries.length || next.some((e, i) => e !== entries[i])) changed = true;
      entries = next;
      return changed;
    },
    close() {
      closed = true;
      for (const slot of byKey.values()) {
        slot.unwatch();
        slot.entry.subchannel.close();
      }
      byKey.clear();
      entries = [];
    },
  };
}

/**
 * The aggregated state of policies that keep every endpoint connected (round_robin's rules, A58): READY if one is,
 * else CONNECTING if one is connecting or idle (an idle one is being reconnected), else TRANSIENT_FAILURE.
 */
export function eagerAggregateState(states: Iterable<ConnectivityState>): ConnectivityState {
  let connecting = false;
  for (const s of states) {
    if (s === "READY") return "READY";
    if (s === "CONNECTING" || s === "IDLE") connecting = true;
  }
  return connecting ? "CONNECTING" : "TRANSIENT_FAILURE";
}

/** The error of a policy with no usable endpoint, naming the last connection error when there is one. */
export function noEndpointMessage(policy: string, entries: readonly EndpointEntry<unknown>[], note?: string): string {
  if (entries.length === 0) return `${policy} has no endpoints${note === undefined ? "" : `: ${note}`}`;
  for (let i = entries.length - 1; i >= 0; i--) {
    const error = entries[i]?.subchannel.lastError;
    if (error !== undefined) return `${policy}: no endpoint is READY; last error: ${error.message}`;
  }
  return `${policy}: no endpoint is READY`;
}
