// What the per-call path reads from its transport: the routing state calls wait on and pick from, and the
// transport-wide settings every call shares (metrics, timeouts, retry throttling and buffer, idleness).
import type { ConnectError } from "@connectrpc/connect";
import type { ConfigSelector } from "../balancer/config-selector.js";
import type { ClusterEntry } from "../clusters/cluster-manager.js";
import type { RetryBufferPool } from "../policies/retry-buffer.js";
import type { RetryThrottle } from "../policies/retry-throttle.js";
import type { CallMetricsRecorder } from "./metrics.js";

/** What the call path reads from the transport. */
export interface CallState {
  /** Undefined until the first Listener/RouteConfiguration pair (or error) arrives. */
  readonly selector: ConfigSelector | ConnectError | undefined;
  /** The cluster entries of the current selector. */
  readonly clusters: ReadonlyMap<string, ClusterEntry>;
  readonly closed: ConnectError | undefined;
  /** What calls wait for while there is no selector (the Listener, or its RouteConfiguration). */
  configWaitingFor(): string;
  /** Resolves (or calls back) when the selector or any cluster's picker changed. */
  onChange(listener: () => void): () => void;
  /** One call stopped holding a cluster. */
  release(entry: ClusterEntry): void;
}

export interface CallContext {
  readonly state: CallState;
  readonly target: string;
  readonly metrics: CallMetricsRecorder | undefined;
  readonly defaultTimeoutMs: number | undefined;
  /** Fault and retry draws; default Math.random. */
  readonly random?: () => number;
  /** gRPC retry throttling for this transport (A6), when configured. */
  readonly retryThrottle?: RetryThrottle;
  /** The transport's retry buffer (A6 memory limits), for calls with a retry policy. */
  readonly retryBuffer?: RetryBufferPool;
  /**
   * Unary attempts stay retryable after response headers, until a message arrives (the transport's
   * `retryAfterResponseHeaders`); by default headers commit the attempt (A6).
   */
  readonly retryAfterResponseHeaders?: boolean;
  /** Told when a call starts and when it ends (A9's idle timer counts calls in flight). */
  readonly activity?: { callStarted(): void; callEnded(): void };
}
