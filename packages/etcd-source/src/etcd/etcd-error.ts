// What went wrong talking to etcd, named by cause, from the gRPC status and etcd's own error text (etcd 3.4 sends
// `etcdserver: ...` messages with these codes; its client library matches them the same way).
import { Code, ConnectError } from "@connectrpc/connect";

/**
 * - `unavailable`: no etcd endpoint answered (down, unreachable, no leader, a deadline passed); worth retrying.
 * - `auth-failed`: the user name or password was refused.
 * - `auth-required`: etcd has authentication on and no user was given.
 * - `permission-denied`: the user may not read or write the key range.
 * - `compacted`: the revision asked for is older than etcd's compaction.
 * - `too-large`: a request over etcd's `--max-request-bytes` (or its gRPC receive limit).
 * - `too-many-operations`: a transaction over etcd's `--max-txn-ops`.
 * - `tls`: the TLS handshake failed (certificates, names).
 * - `other`: anything else, with etcd's message.
 */
export type EtcdErrorKind =
  | "unavailable"
  | "auth-failed"
  | "auth-required"
  | "permission-denied"
  | "compacted"
  | "too-large"
  | "too-many-operations"
  | "tls"
  | "other";

export class EtcdError extends Error {
  override readonly name = "EtcdError";
  readonly kind: EtcdErrorKind;
  /** The gRPC status code etcd (or the connection) ended the call with. */
  readonly code: number;
  constructor(kind: EtcdErrorKind, code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.code = code;
  }

  /** Whether trying again later (or on another endpoint) may succeed. */
  get transient(): boolean {
    return this.kind === "unavailable";
  }

  static from(error: unknown, endpoint?: string): EtcdError {
    if (error instanceof EtcdError) return error;
    const connect = ConnectError.from(error);
    const text = connect.rawMessage;
    const where = endpoint ? ` (${endpoint})` : "";
    const kind = classify(connect.code, text, error);
    return new EtcdError(kind, connect.code, `etcd${where}: ${describe(kind, text)}`, { cause: error });
  }
}

function classify(code: Code, text: string, error: unknown): EtcdErrorKind {
  if (text.includes("required revision has been compacted")) return "compacted";
  if (text.includes("request is too large") || (code === Code.ResourceExhausted && /larger than max/.test(text))) {
    return "too-large";
  }
  if (text.includes("too many operations in txn request")) return "too-many-operations";
  if (text.includes("authentication failed")) return "auth-failed";
  if (text.includes("user name is empty") || text.includes("invalid auth token")) return "auth-required";
  if (code === Code.PermissionDenied || text.includes("permission denied")) return "permission-denied";
  if (isTlsFailure(error)) return "tls";
  if (code === Code.Unavailable || code === Code.DeadlineExceeded || code === Code.Aborted) return "unavailable";
  if (code === Code.Canceled && !text.includes("etcdserver")) return "unavailable";
  if (code === Code.Internal && /ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|GOAWAY|closed/i.test(text)) {
    return "unavailable";
  }
  return "other";
}

function isTlsFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = (cause as { cause?: unknown }).cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)/.test(code))
      return true;
    if (/certificate|SSL routines|TLS/i.test(cause.message) && !/etcdserver/.test(cause.message)) return true;
  }
  return false;
}

function describe(kind: EtcdErrorKind, text: string): string {
  switch (kind) {
    case "auth-failed":
      return `the user name or password was refused (${text})`;
    case "auth-required":
      return `etcd requires authentication: give a user and password (${text})`;
    case "too-large":
      return `the request is larger than etcd accepts (its --max-request-bytes) (${text})`;
    case "too-many-operations":
      return `the transaction has more operations than etcd accepts (its --max-txn-ops) (${text})`;
    default:
      return text;
  }
}
