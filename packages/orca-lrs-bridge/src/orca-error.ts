/**
 * Which header an ORCA report came in (docs/orca-lrs.md#which-header):
 * - `bin`: `endpoint-load-metrics-bin`, base64 of the binary message (gRPC, A51; read first, as Envoy does);
 * - `prefixed-bin`, `prefixed-text`, `prefixed-json`: one `endpoint-load-metrics` header whose value starts with
 *   `BIN `, `TEXT ` or `JSON ` (today's Envoy);
 * - `native`, `json`: the earlier Envoy forms, an unprefixed `name:value` list in `endpoint-load-metrics` and proto
 *   JSON in `endpoint-load-metrics-json` (read as a fallback).
 */
export type OrcaTrailerFormat = "bin" | "prefixed-bin" | "prefixed-text" | "prefixed-json" | "native" | "json";

/**
 * A per-call ORCA report that cannot be read: malformed, duplicated, or in a format nobody defines. The call's
 * report is then treated as absent; nothing of it is recorded.
 */
export class OrcaParseError extends Error {
  override readonly name = "OrcaParseError";
  /** The form at fault; absent when the `endpoint-load-metrics` value names a format that does not exist. */
  readonly format: OrcaTrailerFormat | undefined;

  constructor(message: string, format?: OrcaTrailerFormat, options?: { cause?: unknown }) {
    super(message, options);
    this.format = format;
  }
}

/** Where a value was read from, for the errors: the header as people know it, and the form. */
export interface OrcaSource {
  readonly header: string;
  readonly format: OrcaTrailerFormat;
}
