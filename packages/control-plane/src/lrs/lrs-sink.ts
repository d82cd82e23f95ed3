// The control plane's LRS sink: serves `LoadReportingService.StreamLoadStats` beside ADS. Each node is told which
// clusters to report and how often (a policy per node, a default for the rest); every report is kept (up to the
// history limit) with its node, and the latest figures of each node and cluster are readable as loads.
import { create } from "@bufbuild/protobuf";
import { type Code, ConnectError } from "@connectrpc/connect";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { ClusterStats } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import {
  type LoadStatsRequest,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { WaitOptions } from "../hooks/hooks.js";
import type { Logger } from "../logger.js";
import { clearLongTimer, setLongTimeout } from "../long-timer.js";
import type { NodeSelector } from "../resources/resource-store.js";
import { checkSameNode } from "../security/node-binding.js";
import { PushQueue } from "../streams/push-queue.js";
import { type ClusterLoad, toClusterLoad } from "./lrs-loads.js";

export const SEND_ALL_CLUSTERS_FEATURE = "envoy.lrs.supports_send_all_clusters";

/** What a node is asked to report. */
export interface LrsPolicy {
  /** `"all"` (`send_all_clusters`) or the cluster names to report. Default `"all"`. */
  readonly clusters?: "all" | readonly string[];
  /** `load_reporting_interval`. Default 10,000. */
  readonly intervalMs?: number;
}

/** One LoadStatsRequest that reports load: every request of a stream but a first one without cluster stats. */
export interface LoadReportEvent {
  /** Position among the reports this server received, from 1. */
  readonly seq: number;
  readonly streamId: number;
  /** The node of the stream (sent on its first request). */
  readonly node: Node | undefined;
  readonly nodeId: string;
  /** `Date.now()` on arrival. */
  readonly receivedAt: number;
  readonly clusterStats: readonly ClusterStats[];
  /** The same figures as plain numbers, one entry per cluster (see `formatClusterLoads`). */
  readonly loads: readonly ClusterLoad[];
  readonly request: LoadStatsRequest;
}

export interface LrsStreamInfo {
  readonly streamId: number;
  readonly nodeId: string;
  readonly peer: string | undefined;
  /** What the stream was last told. */
  readonly policy: { readonly clusters: "all" | readonly string[]; readonly intervalMs: number };
}

/** The load reporting side of a management server. */
export interface LrsSink {
  /**
   * The policy of the nodes `selector` picks (`undefined`: the default for every other node). A node gets the first
   * matching policy, in the order they were set; setting one again for the same node id replaces it. Open streams
   * whose policy changed get a new response at once. Returns the function that removes the policy.
   */
  setPolicy(policy: LrsPolicy, selector?: NodeSelector): () => void;
  /** Every report kept (the history limit applies), oldest first. */
  reports(): LoadReportEvent[];
  /** The seq of the latest report, to wait for later ones (`waitForReport(p, { after })`). */
  mark(): number;
  /** The first report (after `after`) that `predicate` accepts; looks back on the kept reports first. */
  waitForReport(
    predicate?: (event: LoadReportEvent) => boolean,
    options?: WaitOptions | number,
  ): Promise<LoadReportEvent>;
  /** Calls `listener` with every report; returns the function that stops it. */
  onReport(listener: (event: LoadReportEvent) => void): () => void;
  /** The figures of each node's latest report of each cluster (reports without figures are skipped). */
  latestLoads(filter?: { readonly nodeId?: string; readonly clusterName?: string }): ClusterLoad[];
  /** The open LRS streams. */
  streams(): LrsStreamInfo[];
}

interface PolicyEntry {
  readonly policy: Required<LrsPolicy>;
  readonly matches: (node: Node) => boolean;
  readonly nodeId: string | undefined;
}

interface OpenStream {
  readonly id: number;
  readonly peer: string | undefined;
  readonly responses: PushQueue<LoadStatsResponse>;
  node: Node | undefined;
  sent: Required<LrsPolicy> | undefined;
}

export interface LrsSinkDeps {
  readonly logger: Logger;
  readonly historyLimit: number;
  /** The clusters a node is served, for `"all"` to a client without `envoy.lrs.supports_send_all_clusters`. */
  readonly clusterNamesFor: (node: Node | undefined) => string[];
}

const DEFAULT_POLICY: Required<LrsPolicy> = Object.freeze({ clusters: "all", intervalMs: 10_000 });

export class LrsSinkImpl implements LrsSink {
  readonly #deps: LrsSinkDeps;
  readonly #policies: PolicyEntry[] = [];
  #defaultPolicy: Required<LrsPolicy> = DEFAULT_POLICY;
  readonly #history: LoadReportEvent[] = [];
  readonly #latest = new Map<string, ClusterLoad>();
  readonly #listeners = new Set<(event: LoadReportEvent) => void>();
  readonly #waiters = new Set<{
    test: (e: LoadReportEvent) => boolean;
    after: number;
    resolve: (e: LoadReportEvent) => void;
    cancel: (reason: string) => void;
  }>();
  readonly #streams = new Set<OpenStream>();
  #seq = 0;
  #nextStreamId = 0;

  constructor(deps: LrsSinkDeps) {
    this.#deps = deps;
  }

  setPolicy(policy: LrsPolicy, selector?: NodeSelector): () => void {
    const full = validPolicy(policy);
    if (selector === undefined) {
      this.#defaultPolicy = full;
      this.#pushPolicies();
      return () => {
        if (this.#defaultPolicy !== full) return;
        this.#defaultPolicy = DEFAULT_POLICY;
        this.#pushPolicies();
      };
    }
    const nodeId = typeof selector === "string" ? selector : typeof selector === "object" ? selector.nodeId : undefined;
    const matches = typeof selector === "function" ? selector : (node: Node) => node.id === nodeId;
    const entry: PolicyEntry = { policy: full, matches, nodeId };
    const existing = nodeId === undefined ? -1 : this.#policies.findIndex((p) => p.nodeId === nodeId);
    if (existing >= 0) this.#policies[existing] = entry;
    else this.#policies.push(entry);
    this.#pushPolicies();
    return () => {
      const index = this.#policies.indexOf(entry);
      if (index < 0) return;
      this.#policies.splice(index, 1);
      this.#pushPolicies();
    };
  }

  reports(): LoadReportEvent[] {
    return [...this.#history];
  }

  mark(): number {
    return this.#seq;
  }

  waitForReport(
    predicate?: (event: LoadReportEvent) => boolean,
    optionsOrTimeout: WaitOptions | number = {},
  ): Promise<LoadReportEvent> {
    const options = typeof optionsOrTimeout === "number" ? { timeoutMs: optionsOrTimeout } : optionsOrTimeout;
    const after = options.after ?? 0;
    const test = (event: LoadReportEvent) => predicate === undefined || predicate(event);
    const found = this.#history.find((event) => event.seq > after && test(event));
    if (found) return Promise.resolve(found);
    const timeoutMs = options.timeoutMs ?? 5000;
    return new Promise((resolve, reject) => {
      const waiter = {
        test,
        after,
        resolve: (event: LoadReportEvent) => {
          clearLongTimer(timer);
          resolve(event);
        },
        cancel: (reason: string) => {
          clearLongTimer(timer);
          reject(new Error(`${reason} while waiting for a load report`));
        },
      };
      // The caller's wait: any length (docs/decisions.md#long-timers).
      const timer = setLongTimeout(() => {
        this.#waiters.delete(waiter);
        const recent = this.#history
          .filter((e) => e.seq > after)
          .slice(-5)
          .map(describeReport);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for a matching load report; latest:\n  ${recent.join("\n  ") || "(none)"}`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  onReport(listener: (event: LoadReportEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  latestLoads(filter: { readonly nodeId?: string; readonly clusterName?: string } = {}): ClusterLoad[] {
    return [...this.#latest.values()].filter(
      (load) =>
        (filter.nodeId === undefined || load.nodeId === filter.nodeId) &&
        (filter.clusterName === undefined || load.clusterName === filter.clusterName),
    );
  }

  streams(): LrsStreamInfo[] {
    return [...this.#streams].map((s) => ({
      streamId: s.id,
      nodeId: s.node?.id ?? "",
      peer: s.peer,
      policy: { clusters: s.sent?.clusters ?? [], intervalMs: s.sent?.intervalMs ?? 0 },
    }));
  }

  /** Serves one StreamLoadStats call: reads requests in the background, yields the responses. */
  serve(
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ): AsyncIterable<LoadStatsResponse> {
    const stream: OpenStream = {
      id: ++this.#nextStreamId,
      peer,
      responses: new PushQueue(),
      node: undefined,
      sent: undefined,
    };
    this.#streams.add(stream);
    const logger = this.#deps.logger;
    const onAbort = () => stream.responses.end();
    signal.addEventListener("abort", onAbort);
    void (async () => {
      try {
        let first = true;
        for await (const request of requests) {
          if (first) {
            first = false;
            stream.node = request.node;
            logger.debug(`[lrs #${stream.id}] opened by node "${request.node?.id ?? ""}"`);
            this.#pushPolicy(stream);
            // The first request introduces the node; every later one is a report, even an empty one.
            if (request.clusterStats.length === 0) continue;
          } else {
            checkSameNode(stream.node, request.node);
          }
          this.#record(stream, request);
        }
        stream.responses.end();
      } catch (error) {
        stream.responses.end(error);
      }
    })();
    const cleanup = () => {
      signal.removeEventListener("abort", onAbort);
      this.#streams.delete(stream);
    };
    return (async function* () {
      try {
        yield* stream.responses;
      } finally {
        cleanup();
      }
    })();
  }

  /** Ends every open stream (the server is stopping). */
  endStreams(code: Code, message: string): void {
    for (const stream of this.#streams) stream.responses.abort(new ConnectError(message, code));
  }

  /** Rejects every pending wait (the server is closing). */
  cancelWaits(reason: string): void {
    for (const waiter of this.#waiters) waiter.cancel(reason);
    this.#waiters.clear();
  }

  #record(stream: OpenStream, request: LoadStatsRequest): void {
    const nodeId = stream.node?.id ?? "";
    const receivedAt = Date.now();
    const loads = request.clusterStats.map((stats) => toClusterLoad(nodeId, stats, receivedAt));
    const event: LoadReportEvent = {
      seq: ++this.#seq,
      streamId: stream.id,
      node: stream.node,
      nodeId,
      receivedAt,
      clusterStats: request.clusterStats,
      loads,
      request,
    };
    this.#history.push(event);
    const limit = this.#deps.historyLimit;
    if (this.#history.length > limit * 1.25) this.#history.splice(0, this.#history.length - limit);
    for (const load of loads)
      this.#latest.set(`${nodeId}\u0000${load.clusterName}\u0000${load.clusterServiceName}`, load);
    for (const waiter of [...this.#waiters]) {
      if (event.seq > waiter.after && waiter.test(event)) {
        this.#waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#deps.logger.error("load report listener threw", error);
      }
    }
  }

  #policyFor(node: Node | undefined): Required<LrsPolicy> {
    if (node !== undefined) {
      for (const entry of this.#policies) {
        let matched = false;
        try {
          matched = entry.matches(node);
        } catch (error) {
          this.#deps.logger.warn(`LRS policy selector threw for node "${node.id}"; treated as no match`, error);
        }
        if (matched) return entry.policy;
      }
    }
    return this.#defaultPolicy;
  }

  #pushPolicies(): void {
    for (const stream of this.#streams) if (stream.sent !== undefined) this.#pushPolicy(stream);
  }

  #pushPolicy(stream: OpenStream): void {
    const policy = this.#policyFor(stream.node);
    if (stream.sent !== undefined && samePolicy(stream.sent, policy)) return;
    stream.sent = policy;
    const canSendAll = stream.node?.clientFeatures.includes(SEND_ALL_CLUSTERS_FEATURE) ?? false;
    const all = policy.clusters === "all";
    const clusters = all ? (canSendAll ? [] : this.#deps.clusterNamesFor(stream.node).sort()) : [...policy.clusters];
    const ms = policy.intervalMs;
    stream.responses.push(
      create(LoadStatsResponseSchema, {
        sendAllClusters: all && canSendAll,
        clusters,
        loadReportingInterval: { seconds: BigInt(Math.floor(ms / 1000)), nanos: Math.round((ms % 1000) * 1e6) },
      }),
    );
  }
}

function validPolicy(policy: LrsPolicy): Required<LrsPolicy> {
  const intervalMs = policy.intervalMs ?? DEFAULT_POLICY.intervalMs;
  if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) throw new RangeError("LRS policy: intervalMs must be > 0");
  const clusters = policy.clusters ?? "all";
  if (clusters !== "all" && !Array.isArray(clusters))
    throw new TypeError('LRS policy: clusters must be "all" or a list');
  return Object.freeze({ clusters: clusters === "all" ? "all" : Object.freeze([...clusters]), intervalMs });
}

function samePolicy(a: Required<LrsPolicy>, b: Required<LrsPolicy>): boolean {
  if (a.intervalMs !== b.intervalMs) return false;
  if (a.clusters === "all" || b.clusters === "all") return a.clusters === b.clusters;
  return a.clusters.length === b.clusters.length && a.clusters.every((c, i) => c === b.clusters[i]);
}

function describeReport(event: LoadReportEvent): string {
  const clusters = event.clusterStats.map((c) => {
    const issued = c.upstreamLocalityStats.reduce((n, l) => n + l.totalIssuedRequests, 0n);
    return `${c.clusterName} (${issued} issued)`;
  });
  return `#${event.seq} stream ${event.streamId} node "${event.nodeId}": ${clusters.join(", ") || "no clusters"}`;
}
