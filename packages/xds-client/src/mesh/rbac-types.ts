// What the RBAC engine (A41) reads of a call, and what it answers. The engine is pure: an xDS-enabled server builds
// one `RbacRequest` per call from its connection and request headers and asks each RBAC filter of the call's chain,
// in order, with the filter's compiled config (the route's override, else the virtual host's, else the Listener's).
// `compileRbac(config: RbacFilterConfig): CompiledRbac` and
// `evaluateRbac(compiled: CompiledRbac, request: RbacRequest): RbacDecision` live in rbac-engine.ts.

/**
 * A call's request headers as Node's HTTP/2 server hands them over (`IncomingHttpHeaders`: lower-case names,
 * pseudo-headers included, a header sent several times as an array). The engine reads only the names its policies
 * test. Several values are joined with `,` (no space), as A41 says; `-bin` values are read in their base64 form.
 */
export type RbacHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The calling peer. */
export interface RbacPeer {
  /** The peer's IP address as the socket reports it (`::ffff:a.b.c.d` is read as `a.b.c.d`). */
  readonly ip: string;
  readonly port: number;
  /**
   * `undefined` when the connection is not TLS. Otherwise the names `authenticated.principal_name` is tested
   * against, in A41's order: the client certificate's URI SANs; if it has none, its DNS SANs; if none, its subject as
   * an RFC 2253 name; without a client certificate, `[""]`. `principalNamesOf(certificate)` (principal-names.ts)
   * computes them from a certificate once per connection.
   */
  readonly principalNames: readonly string[] | undefined;
}

/** The server's side of the connection. */
export interface RbacLocal {
  readonly ip: string;
  readonly port: number;
}

/** One call, as the RBAC engine sees it. */
export interface RbacRequest {
  /** The call's path, `/package.Service/Method` (what `url_path` and the `:path` header match). */
  readonly path: string;
  readonly headers: RbacHeaders;
  readonly peer: RbacPeer;
  readonly local: RbacLocal;
}

/**
 * The engine's answer for one RBAC filter. A denied call ends with PERMISSION_DENIED before the handler runs;
 * `message` is what gRPC servers put in the status (`incoming RPC did not match an allow policy`, or
 * `incoming RPC matched a deny policy "<name>"`).
 */
export type RbacDecision =
  | { readonly allowed: true /** The ALLOW policy that matched, if any. */; readonly policy?: string }
  | {
      readonly allowed: false /** The DENY policy that matched, if any. */;
      readonly policy?: string;
      readonly message: string;
    };

/**
 * A filter config compiled for evaluation: matchers built once (string, regex and CIDR tests), and the policies
 * indexed by what they must read (an exact path, a header that must be present) so that a call only runs the
 * policies it could match. Opaque; immutable; safe to share between calls and connections.
 */
export interface CompiledRbac {
  /** `ALLOW`, `DENY`, or `none` for a filter without rules (every call allowed). */
  readonly action: "ALLOW" | "DENY" | "none";
  /** How many policies it holds. */
  readonly policyCount: number;
}
