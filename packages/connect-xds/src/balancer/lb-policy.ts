// The load-balancing extension point (docs/architecture.md#connect-xds-lb-policies), shaped like gRPC's: a policy
// is given its config and endpoints, creates subchannels through its helper, and publishes a connectivity state with
// a picker. Pickers run once per call, so they must not allocate once warm: complete picks are built when the
// picker is built and returned as they are.
import type { ConnectError } from "@connectrpc/connect";
import type { Clock } from "@xdskit/orca-lrs-bridge";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { HealthStatusName, LocalityName, Logger } from "@xdskit/xds-client";
import type { RouteSelection } from "./config-selector.js";

/** gRPC connectivity states. SHUTDOWN is not modelled: a closed subchannel or policy reports nothing more. */
export type ConnectivityState = "IDLE" | "CONNECTING" | "READY" | "TRANSIENT_FAILURE";

/** A locality as the data path carries it. */
export interface LbLocality {
  readonly name: LocalityName;
  /** The A78 `grpc.lb.locality` value, `{region="r", zone="z", sub_zone="s"}`; also the weighted_target child name. */
  readonly label: string;
  /** The locality's `load_balancing_weight`. */
  readonly weight: number;
}

/** One backend (gRPC's resolver endpoint): one or more addresses of the same server. */
export interface LbEndpoint {
  /** `host:port` (IPv6 in brackets), in order; more than one only for dual-stack endpoints (A61). */
  readonly addresses: readonly string[];
  /** `load_balancing_weight`, 1 when unset. */
  readonly weight: number;
  readonly healthStatus: HealthStatusName;
  /** Empty when unset. */
  readonly hostname: string;
  /**
   * A76: where ring_hash places the endpoint instead of by its first address (EDS: the `envoy.lb` filter metadata's
   * `hash_key`). Absent or empty: by its address.
   */
  readonly hashKey?: string;
  /** Set for endpoints from EDS. */
  readonly locality?: LbLocality;
  /**
   * gRPC's hierarchical path: the child names, outermost first, that route this endpoint through tree-shaped
   * policies. `priority` takes `path[0]`, `weighted_target` the next; each strips its own element (`stripPath`).
   */
  readonly path: readonly string[];
}

/** What a policy is given. Endpoints are already filtered: only HEALTHY and UNKNOWN ones reach a policy. */
export interface LbPolicyUpdate<C = unknown> {
  readonly config: C;
  readonly endpoints: readonly LbEndpoint[];
  /** Why there are no endpoints, when that is known (e.g. the EDS resource does not exist). */
  readonly resolutionNote?: string;
}

/** A policy instance; everything runs on the event loop, one method at a time. */
export interface LbPolicy<C = unknown> {
  /** A new config and/or endpoint list. The first call comes right after `create`. */
  update(update: LbPolicyUpdate<C>): void;
  /** A pick found this policy IDLE: start connecting. */
  exitIdle(): void;
  /** Stops everything: closes subchannels and children, clears timers. Nothing is published afterwards. */
  close(): void;
}

/** How a call ended, given to the pick's tracker. */
export interface CallEndInfo {
  /** The gRPC status code (0 for OK). */
  readonly code: number;
  /** The response trailers (for a failed call, the error's metadata). */
  readonly trailers: Headers;
  /** The call's per-call ORCA report, parsed from the trailers on first access and then kept (A51: once per call). */
  readonly orcaReport: OrcaLoadReport | undefined;
}

/** Per-call hooks of a complete pick. Trackers are built with the picker, never per call. */
export interface CallTracker {
  /** The call was handed to the subchannel. */
  onCallStarted?(): void;
  /** The call ended (status received, failed or cancelled); called exactly once after `onCallStarted`. */
  onCallEnded?(info: CallEndInfo): void;
  /** The pick was not used (the call picks again, or ends before it started); instead of the two above. */
  onPickDiscarded?(): void;
}

export interface CompletePick {
  readonly type: "complete";
  readonly subchannel: Subchannel;
  readonly tracker?: CallTracker;
}

/**
 * - `complete`: send the call on this READY subchannel;
 * - `queue`: no decision yet; the call waits for the next picker (bounded by its deadline);
 * - `fail`: fail the call with this error (gRPC: wait-for-ready calls would queue; Connect has no wait-for-ready);
 * - `drop`: fail the call with this error; never retried, whatever the call's options.
 */
export type PickResult =
  | CompletePick
  | { readonly type: "queue" }
  | { readonly type: "fail"; readonly error: ConnectError }
  | { readonly type: "drop"; readonly error: ConnectError };

/** What a picker learns about a call. Built once per call by the transport. */
export interface PickInfo {
  /** `/package.Service/Method`. */
  readonly path: string;
  /** The call's request headers (lowercase names; `-bin` headers included). */
  readonly headers: Headers;
  /** The route the config selector chose, with the fields policies read (hash policies for ring_hash). */
  readonly route: RouteSelection;
}

export interface Picker {
  pick(info: PickInfo): PickResult;
}

/**
 * A policy's handle on one connection to one address. Connections are shared: two handles for the same address
 * (in one transport) share one HTTP/2 connection, which closes when the last handle is closed.
 */
export interface Subchannel {
  readonly address: string;
  /** The endpoint this handle was created for. */
  readonly endpoint: LbEndpoint;
  readonly state: ConnectivityState;
  /** Why the last connection attempt failed (set in TRANSIENT_FAILURE). */
  readonly lastError: Error | undefined;
  /** Listens to state changes (called after `state` changed); returns the function that stops listening. */
  watch(listener: (state: ConnectivityState) => void): () => void;
  /** From IDLE, starts connecting; otherwise nothing. */
  requestConnection(): void;
  /** The policy is done with it. In-flight calls on the connection finish; idempotent. */
  close(): void;
  /**
   * A51 out-of-band load reports: the backend's ORCA `StreamCoreMetrics` on this subchannel's own connection, run
   * while the connection is READY and shared by every listener of the connection (the smallest interval asked is
   * used). Returns the function that stops listening. Absent on subchannels that have no connection of their own.
   */
  watchLoadReports?(listener: LoadReportListener): () => void;
  /**
   * Set by a subchannel that wraps another (e.g. to watch its calls or eject it): the wrapped one. A pick may return
   * a wrapper; the call path follows `delegate` to the transport's own subchannel to send the call. An endpoint's
   * subchannel (A61) delegates to the address it is connected to, and to none while it is not READY.
   */
  readonly delegate?: Subchannel | undefined;
}

/** A listener of a subchannel's out-of-band load reports (A51). */
export interface LoadReportListener {
  /** How often reports are wanted (the `report_interval` asked of the backend). */
  readonly intervalMs: number;
  onReport(report: OrcaLoadReport): void;
}

/** Optional instrument hooks (A78-style) a policy may record into. */
export interface LbMetrics {
  addCounter(name: string, value: number, labels: Readonly<Record<string, string>>): void;
  recordHistogram(name: string, value: number, labels: Readonly<Record<string, string>>): void;
}

/** What a policy is given to act on the world. Parents wrap their children's helpers. */
export interface LbHelper {
  /** A subchannel for one address (pick_first uses these: one per address it tries). */
  createSubchannel(address: string, endpoint: LbEndpoint): Subchannel;
  /**
   * One subchannel for a whole endpoint (A61), what policies that balance over endpoints use: with one address,
   * that address's subchannel; with several, one that tries them as pick_first does (Happy Eyeballs) and keeps the
   * first that connects. Its `address` is the endpoint's first address, whichever one it is connected to.
   */
  createEndpointSubchannel(endpoint: LbEndpoint): Subchannel;
  /**
   * The policy saw a connection fail or be lost: the addresses may have changed. A LOGICAL_DNS cluster resolves its
   * name again (rate-limited); for EDS clusters it does nothing, the control plane pushes changes.
   */
  requestReresolution(): void;
  /** Publishes the policy's state and picker. `picker` is used for every call until the next update. */
  updateState(state: ConnectivityState, picker: Picker): void;
  /** Creates a child policy from a gRPC `loadBalancingConfig` list (the first entry the registry knows, A52). */
  readonly registry: LbPolicyRegistry;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Uniform in [0, 1); injected so tests can fix it. */
  readonly random: () => number;
  /** A uniform integer in [0, bound) from `random`; use it in pickers (it allocates nothing, see random.ts). */
  readonly randomInt: (bound: number) => number;
  /** The A66 `grpc.target` of the transport. */
  readonly target: string;
  readonly metrics: LbMetrics;
}

/** A policy type. `parseConfig` turns the JSON of `loadBalancingConfig` into the policy's config, or throws. */
export interface LbPolicyFactory<C = unknown> {
  /** gRPC's policy name, the key in `loadBalancingConfig` (`round_robin`, `xds_wrr_locality_experimental`). */
  readonly name: string;
  /**
   * A52: the `TypedExtensionConfig` message type(s) of `load_balancing_policy` this policy implements
   * (`envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin`), for custom policies the TypedStruct's type;
   * none for policies only the data path builds (`priority_experimental`, `weighted_target_experimental`).
   */
  readonly typeNames: readonly string[];
  parseConfig(json: unknown): C;
  create(helper: LbHelper): LbPolicy<C>;
}

/** LB policies by gRPC name and by xDS message type (A52); `createLbPolicyRegistry` makes one. */
export interface LbPolicyRegistry {
  /** The factory registered under a gRPC policy name. */
  get(name: string): LbPolicyFactory | undefined;
  /** The factory implementing an xDS `TypedExtensionConfig` message type (A52), e.g. `...round_robin.v3.RoundRobin`. */
  getByTypeName(typeName: string): LbPolicyFactory | undefined;
  /** Every registered factory, in registration order. */
  list(): readonly LbPolicyFactory[];
  /**
   * gRPC's service-config rule for a `loadBalancingConfig` list: the first entry whose name is registered, its
   * config parsed. Throws `LbConfigError` when no entry is registered or the chosen one's config is invalid (the
   * next entry is not tried then, as in gRPC).
   */
  select(configs: readonly unknown[]): { readonly factory: LbPolicyFactory; readonly config: unknown };
  /** `select`, then `factory.create(helper)`; returns the policy with its parsed config (not yet updated). */
  create(configs: readonly unknown[], helper: LbHelper): { readonly policy: LbPolicy; readonly config: unknown };
}

/** A `fail` pick result with a fixed error (for TRANSIENT_FAILURE pickers). */
export function failingPicker(error: ConnectError): Picker {
  const result: PickResult = Object.freeze({ type: "fail", error });
  return { pick: () => result };
}

const QUEUE: PickResult = Object.freeze({ type: "queue" });

/** Queues every call (CONNECTING, or IDLE after asking the policy to connect). */
export const queuePicker: Picker = Object.freeze({ pick: () => QUEUE });

/** A picker that queues and, on its first pick, asks `policy` to leave IDLE (gRPC's idle picker). */
export function idlePicker(exitIdle: () => void): Picker {
  let asked = false;
  return {
    pick() {
      if (!asked) {
        asked = true;
        // Not inside the pick: the policy may publish a new picker while this one is still running.
        queueMicrotask(exitIdle);
      }
      return QUEUE;
    },
  };
}

/** The endpoints whose `path` starts with `name`, with that element removed. */
export function stripPath(endpoints: readonly LbEndpoint[]): Map<string, LbEndpoint[]> {
  const byChild = new Map<string, LbEndpoint[]>();
  for (const endpoint of endpoints) {
    const head = endpoint.path[0];
    if (head === undefined) continue;
    let list = byChild.get(head);
    if (list === undefined) {
      list = [];
      byChild.set(head, list);
    }
    list.push({ ...endpoint, path: endpoint.path.slice(1) });
  }
  return byChild;
}
