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
} from "../balancer/lb-policy.js";
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
import { xxHash64 } from "./xx-hash64.js";

export const RING_HASH_POLICY_NAME = "ring_hash_experimental";
export const RING_HASH_TYPE_NAME = "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash";

export interface RingHashPolicyOptions {
  /** The local cap on both ring sizes (A42; default 4096). */
  readonly ringSizeCap?: number;
  /**
   * Also registers the policy under the type name `ring_hash_experimental`, so a Cluster's `load_balancing_policy`
   * may name it with a TypedStruct (A52) carrying gRPC's JSON config, `requestHashHeader` included (A76): Envoy's
   * RingHash message has no field for it. Default false.
   */
  readonly typedStruct?: boolean;
}

/** A76: a header name gRPC accepts for `request_hash_header` (lowercase token characters, not `-bin`). */
const HEADER_NAME = /^[0-9a-z_.-]+$/;

function requestHashHeader(value: unknown): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw new Error("ring_hash requestHashHeader must be a string");
  if (!HEADER_NAME.test(value)) throw new Error(`ring_hash requestHashHeader "${value}" is not a valid header name`);
  if (value.endsWith("-bin")) throw new Error(`ring_hash requestHashHeader "${value}" is a binary header`);
  return value;
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
    typeNames: options.typedStruct === true ? [RING_HASH_TYPE_NAME, RING_HASH_POLICY_NAME] : [RING_HASH_TYPE_NAME],
    parseConfig(json) {
      const o = (json ?? {}) as { minRingSize?: unknown; maxRingSize?: unknown; requestHashHeader?: unknown };
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
      const header = requestHashHeader(o.requestHashHeader);
      return header === undefined ? result.config : { ...result.config, requestHashHeader: header };
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
  /** What each ring entry's points hash (A76: its hash key, else its first address), joined, to see a change. */
  let ringKeys = "";
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
    helper.updateState(
      aggregate,
      createRingPicker(ring, ringEntries, snapshot, channelId, helper.random, config?.requestHashHeader),
    );
  }

  return {
    update(update) {
      const configChanged =
        config === undefined ||
        config.minRingSize !== update.config.minRingSize ||
        config.maxRingSize !== update.config.maxRingSize ||
        config.requestHashHeader !== update.config.requestHashHeader;
      config = update.config;
      note = update.resolutionNote;
      const changed = list.update(update.endpoints);
      const entries = list.entries.map((e) => ({ key: ringKey(e), weight: e.weight }));
      const keys = entries.map((e) => e.key).join("\n");
      if (changed || configChanged || ring === undefined || keys !== ringKeys) {
        ringEntries = list.entries;
        ringKeys = keys;
        ring = buildHashRing(entries, config);
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

/** A76: an endpoint's place on the ring comes from its hash key when it has one, else from its first address. */
function ringKey(entry: EndpointEntry<EndpointData>): string {
  const hashKey = entry.endpoint.hashKey;
  return hashKey === undefined || hashKey === "" ? entry.key : hashKey;
}

/** A76: the hash of the request hash header's value; undefined (a random hash) when absent or empty. */
function headerHash(headers: Headers, name: string): bigint | undefined {
  const value = headers.get(name);
  return value === null || value === "" ? undefined : xxHash64(value);
}

/** The picker for one ring and one snapshot of endpoint states; complete picks are built here, once. */
function createRingPicker(
  ring: HashRing,
  entries: readonly EndpointEntry<EndpointData>[],
  states: readonly ConnectivityState[],
  channelId: bigint,
  random: () => number,
  hashHeader: string | undefined,
): Picker {
  const completes: CompletePick[] = entries.map((e) => Object.freeze({ type: "complete", subchannel: e.subchannel }));
  const requested = new Uint8Array(entries.length);
  return {
    pick(info: PickInfo): PickResult {
      const hash =
        (hashHeader === undefined
          ? computeRequestHash(compileHashPolicies(info.route.hashPolicies), info.headers, channelId)
          : headerHash(info.headers, hashHeader)) ?? random64(random);
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
