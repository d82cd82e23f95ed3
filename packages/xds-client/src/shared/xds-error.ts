/** gRPC status codes (google.rpc.Code). */
export const StatusCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type StatusCode = (typeof StatusCode)[keyof typeof StatusCode];

const codeNames: readonly string[] = Object.keys(StatusCode);

/** The name of a status code (`UNAVAILABLE`), or `CODE_<n>` for a number outside the enum. */
export function statusCodeName(code: number): string {
  return codeNames[code] ?? `CODE_${code}`;
}

/** A code received from a peer as a StatusCode: anything outside gRPC's range becomes UNKNOWN (as gRPC does). */
export function toStatusCode(code: number): StatusCode {
  return Number.isInteger(code) && code >= 0 && code < codeNames.length ? (code as StatusCode) : StatusCode.UNKNOWN;
}

/** The message of anything thrown: an Error's `message`, else its text. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  return String(error);
}

// Shared by every copy of this package loaded in one process (Symbol.for), so `isXdsError` works across copies.
const XDS_ERROR_BRAND: unique symbol = Symbol.for("xdskit.XdsError");

/**
 * Whether `value` is an XdsError, including one created by another copy of this package (where `instanceof` fails).
 */
export function isXdsError(value: unknown): value is XdsError {
  return (
    typeof value === "object" && value !== null && (value as { [XDS_ERROR_BRAND]?: unknown })[XDS_ERROR_BRAND] === true
  );
}

/**
 * Why an error happened:
 * - `does_not_exist`: the resource timer fired, an LDS/CDS SotW response dropped it, or the server sent NOT_FOUND;
 * - `timeout`: the resource timer fired with `resource_timer_is_transient_error`;
 * - `server_error`: the server sent a TP3 `ResourceError` with another code;
 * - `nacked`: the resource failed validation;
 * - `connection`: the xDS stream or channel failed, or no connection was made within the connect deadline;
 * - `unknown_authority`, `invalid_name`: the watched name cannot be used;
 * - `invalid_options`: the client's options or bootstrap are malformed;
 * - `internal`: a bug or an unexpected exception.
 */
export type XdsErrorKind =
  | "does_not_exist"
  | "timeout"
  | "server_error"
  | "nacked"
  | "connection"
  | "unknown_authority"
  | "invalid_name"
  | "invalid_options"
  | "internal";

export interface XdsErrorOptions {
  readonly cause?: unknown;
  readonly resource?: { readonly typeUrl: string; readonly name: string } | undefined;
  readonly nodeId?: string | undefined;
}

/** The one error type of the suite: a gRPC status code, a kind naming the cause, and a `[CODE]`-prefixed message. */
export class XdsError extends Error {
  override readonly name = "XdsError";
  readonly code: StatusCode;
  readonly kind: XdsErrorKind;
  /** The message without the `[CODE]` prefix and node ID suffix. */
  readonly detail: string;
  readonly resource: { readonly typeUrl: string; readonly name: string } | undefined;
  readonly nodeId: string | undefined;

  constructor(code: StatusCode, kind: XdsErrorKind, detail: string, options: XdsErrorOptions = {}) {
    const suffix = options.nodeId === undefined ? "" : ` (node ID: ${options.nodeId})`;
    super(`[${statusCodeName(code)}] ${detail}${suffix}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.kind = kind;
    this.detail = detail;
    this.resource = options.resource;
    this.nodeId = options.nodeId;
  }

  /** The same error for another resource or node (errors are shared between watchers of one resource). */
  withContext(options: XdsErrorOptions): XdsError {
    return new XdsError(this.code, this.kind, this.detail, {
      cause: options.cause ?? this.cause,
      resource: options.resource ?? this.resource,
      nodeId: options.nodeId ?? this.nodeId,
    });
  }

  /** Normalises anything thrown into an XdsError (`internal`, code UNKNOWN, unless it already is one). */
  static from(error: unknown, options: XdsErrorOptions = {}): XdsError {
    if (isXdsError(error)) return error;
    return new XdsError(StatusCode.UNKNOWN, "internal", errorMessage(error), { ...options, cause: error });
  }
}

Object.defineProperty(XdsError.prototype, XDS_ERROR_BRAND, { value: true });
