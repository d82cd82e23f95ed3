// The ring_hash LB policy (A42, A61): every endpoint of the cluster on one ring, connections made lazily when a
// call's hash lands on an IDLE endpoint, and the A42 aggregated state. See docs/decisions.md#policies-ring-hash.

import { Code, ConnectError } from "@connectrpc/connect";
import {
  type CompletePick,
  type ConnectivityState,
  failingPicker,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type Picker,
  type PickInfo,
  type PickResult,
} from "../lb-policy.js";
import { createEndpointSubchannels, type EndpointEntry } from "./endpoint-subchannels.js";
import { compileHashPolicies, computeRequestHash, random64 } from "./hash-policy.js";
import {
  nextRingHashEndpointState,
  RING_PICK_CONNECT,
  RING_PICK_QUEUE,
  RING_PICK_READY,
  ringHashAggregateState,
  ringHashPick,
  ringHashProactiveConnect,
  ringPickAction,
  ringPickEndpoint,
} from "./ring-hash-picker.js";
import {
  buildHashRing,
  DEFAULT_RING_SIZE_CAP,
  type HashRing,
  type RingHashConfig,
  resolveRingHashConfig,
} from "./ring-hash-ring.js";

export const RING_HASH_POLICY_NAME = "ring_hash_experimental";
export const RING_HASH_TYPE_NAME = "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash";

export interface RingHashPolicyOptions {
  /** The local cap on both ring sizes (A42; default 4096). */
  readonly ringSizeCap?: number;
}

const QUEUE: PickResult = Object.freeze({ type: "queue" });

interface EndpointData {
  /** The state ring_hash acts on (sticky TRANSIENT_FAILURE, READY-then-failed as IDLE). */
  state: ConnectivityState | undefined;
}

/** The ring_hash policy factory; `parseConfig` takes `{ minRingSize?, maxRingSize? }` (gRPC's JSON). */
export function createRingHashPolicyFactory(options: RingHashPolicyOptions = {}): LbPolicyFactory<RingHashConfig> {
  const cap = options.ringSizeCap ?? DEFAULT_RING_SIZE_CAP;
  return {
    name: RING_HASH_POLICY_NAME,
    typeNames: [RING_HASH_TYPE_NAME],
    parseConfig(json) {
      const o = (json ?? {}) as { minRingSize?: unknown; maxRingSize?: unknown };
      if (typeof o !== "object" || Array.isArray(o)) throw new Error("ring_hash config must be an object");
      for (const [k, v] of Object.entries(o)) {
        if ((k === "minRingSize" || k === "maxRingSize") && typeof v !== "number") {
          throw new Error(`ring_hash ${k} must be a number`);
        }
      }
      const result = resolveRingHashConfig(
        { minimumRingSize: o.minRingSize as number | undefined, maximumRingSize: o.maxRingSize as number | undefined },
        cap,
      );
      if (!result.ok) throw new Error(result.error);
      return result.config;
    },
    create: (helper) => createRingHashPolicy(helper),
  };
}

function createRingHashPolicy(helper: LbHelper): LbPolicy<RingHashConfig> {
  // The transport-wide `io.grpc.channel_id` value this policy hashes with (stable for the policy's life).
  const channelId = random64(helper.random);
  let config: RingHashConfig | undefined;
  let ring: HashRing | undefined;
  let ringEntries: readonly EndpointEntry<EndpointData>[] = [];
  let note: string | undefined;
  let closed = false;

  const list = createEndpointSubchannels<EndpointData>(
    helper,
    () => ({ state: undefined }),
    (entry, reported) => {
      entry.data.state = nextRingHashEndpointState(entry.data.state, reported);
      // A dropped connection is IDLE to the ring; its subchannel stays idle until a pick or the recovery rule asks.
      publish();
    },
  );

  function states(): ConnectivityState[] {
    return ringEntries.map((e) => e.data.state ?? "IDLE");
  }

  function publish(): void {
    if (closed) return;
    if (ring === undefined || ringEntries.length === 0) {
      const why = note === undefined ? "" : `: ${note}`;
      helper.updateState(
        "TRANSIENT_FAILURE",
        failingPicker(new ConnectError(`ring_hash has no endpoints${why}`, Code.Unavailable)),
      );
      return;
    }
    const snapshot = states();
    const aggregate = ringHashAggregateState(snapshot);
    const connect = ringHashProactiveConnect(snapshot);
    if (connect >= 0) queueMicrotask(() => ringEntries[connect]?.subchannel.requestConnection());
    helper.updateState(aggregate, createRingPicker(ring, ringEntries, snapshot, channelId, helper.random));
  }

  return {
    update(update) {
      const configChanged =
        config === undefined ||
        config.minRingSize !== update.config.minRingSize ||
        config.maxRingSize !== update.config.maxRingSize;
      config = update.config;
      note = update.resolutionNote;
      const changed = list.update(update.endpoints);
      if (changed || configChanged || ring === undefined) {
        ringEntries = list.entries;
        ring = buildHashRing(
          ringEntries.map((e) => ({ key: e.key, weight: e.weight })),
          config,
        );
      }
      for (const e of ringEntries)
        if (e.data.state === undefined) e.data.state = nextRingHashEndpointState(undefined, e.subchannel.state);
      publish();
    },
    exitIdle() {
      // A pick drives connections; with none in flight, connect the first IDLE endpoint (as gRPC does).
      const i = states().indexOf("IDLE");
      if (i >= 0) ringEntries[i]?.subchannel.requestConnection();
    },
    close() {
      closed = true;
      list.close();
    },
  };
}

/** The picker for one ring and one snapshot of endpoint states; complete picks are built here, once. */
function createRingPicker(
  ring: HashRing,
  entries: readonly EndpointEntry<EndpointData>[],
  states: readonly ConnectivityState[],
  channelId: bigint,
  random: () => number,
): Picker {
  const completes: CompletePick[] = entries.map((e) => Object.freeze({ type: "complete", subchannel: e.subchannel }));
  const requested = new Uint8Array(entries.length);
  return {
    pick(info: PickInfo): PickResult {
      const hash =
        computeRequestHash(compileHashPolicies(info.route.hashPolicies), info.headers, channelId) ?? random64(random);
      const packed = ringHashPick(ring, Number(hash >> 32n), Number(hash & 0xffff_ffffn), states);
      const endpoint = ringPickEndpoint(packed);
      switch (ringPickAction(packed)) {
        case RING_PICK_READY:
          return completes[endpoint] as CompletePick;
        case RING_PICK_CONNECT:
          if (requested[endpoint] === 0) {
            requested[endpoint] = 1;
            const sub = entries[endpoint]?.subchannel;
            // Not inside the pick: connecting publishes a new picker.
            queueMicrotask(() => sub?.requestConnection());
          }
          return QUEUE;
        case RING_PICK_QUEUE:
          return QUEUE;
        default: {
          const last = entries[endpoint]?.subchannel.lastError;
          return {
            type: "fail",
            error: new ConnectError(
              `ring_hash: every endpoint is in TRANSIENT_FAILURE${last === undefined ? "" : `; last error: ${last.message}`}`,
              Code.Unavailable,
            ),
          };
        }
      }
    },
  };
}
