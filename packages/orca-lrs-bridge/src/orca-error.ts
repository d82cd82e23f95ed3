/** Which trailer an ORCA report came in: `-bin` (gRPC, A51), Envoy's native text, or proto JSON. */
export type OrcaTrailerFormat = "bin" | "native" | "json";

/**
 * A per-call ORCA report that cannot be read: malformed, duplicated, or sent in more than one format. The call's
 * report is then treated as absent; nothing of it is recorded.
 */
export class OrcaParseError extends Error {
  override readonly name = "OrcaParseError";
  /** The trailer at fault; absent when several formats were present at once. */
  readonly format: OrcaTrailerFormat | undefined;

  constructor(message: string, format?: OrcaTrailerFormat, options?: { cause?: unknown }) {
    super(message, options);
    this.format = format;
  }
}
