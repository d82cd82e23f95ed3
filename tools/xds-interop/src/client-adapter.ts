// What the driver needs of an xDS client under test: one call at a time, each reporting its peer. Each client
// (grpc-js-xds, connect-xds) has an adapter; the driver, the cases and their assertions are the same for all.

/** The TestService methods the cases call (the names gRPC's interop client uses for its RPC types). */
export type RpcMethod = "UnaryCall" | "EmptyCall";

export const RPC_METHODS: readonly RpcMethod[] = ["UnaryCall", "EmptyCall"];

/** The full gRPC path of a method. */
export function rpcPath(method: RpcMethod): string {
  return `/grpc.testing.TestService/${method}`;
}

export interface CallOptions {
  /** Request metadata (header name, value), sent as given. */
  readonly metadata: readonly (readonly [string, string])[];
  readonly timeoutMs: number;
}

export interface CallOutcome {
  readonly ok: boolean;
  /** The backend that answered: its `hostname` response header (and, for UnaryCall, the response's hostname). */
  readonly peer?: string;
  /** The gRPC status code (0 when ok). */
  readonly code: number;
  readonly message?: string;
}

/** One client channel to an `xds:` target. */
export interface InteropClient {
  /** Never rejects: a failed call is an outcome with `ok: false`. */
  call(method: RpcMethod, options: CallOptions): Promise<CallOutcome>;
  /** Cancels the calls in flight and releases the channel and its xDS client. */
  close(): Promise<void>;
}

/** The xDS bootstrap, as the JSON document gRPC reads (`GRPC_XDS_BOOTSTRAP`). */
export interface BootstrapDocument {
  readonly xds_servers: readonly {
    readonly server_uri: string;
    readonly channel_creds: readonly { readonly type: string }[];
    readonly server_features: readonly string[];
  }[];
  readonly node: {
    readonly id: string;
    readonly cluster: string;
    readonly locality: { readonly region: string; readonly zone: string };
  };
}

export interface InteropClientOptions {
  /** `xds:///name`. */
  readonly target: string;
  /** This channel's own bootstrap: each case has its own control plane. */
  readonly bootstrap: BootstrapDocument;
}

/** A client under test: how to make its channels, and the cases it cannot pass for a known bug of its own. */
export interface InteropClientKind {
  readonly name: string;
  create(options: InteropClientOptions): InteropClient;
  /** Case (or `case/sub-case`) name -> why this client fails it. Those run for every other client only. */
  readonly knownBugs?: Readonly<Record<string, string>>;
  /**
   * Why this client may report CANCELLED for some calls whose deadline passed: deadline checks then accept CANCELLED
   * beside DEADLINE_EXCEEDED (at least one DEADLINE_EXCEEDED still required). Our own client is held to
   * DEADLINE_EXCEEDED alone.
   */
  readonly deadlineMayReadCancelled?: string;
}
