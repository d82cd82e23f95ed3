// The text of a NACK's `error_detail`: every problem of the response, bounded as Envoy bounds it, and the node ID.
/** Envoy's bound on a NACK's `error_detail` message (docs/decisions.md#nack-detail-bound). */
export const MAX_NACK_DETAIL_BYTES = 4096;

/** The NACK text: the problems of the response, bounded to MAX_NACK_DETAIL_BYTES, and the node ID. */
export function nackDetail(errors: readonly string[], nodeId: string): string {
  const head = "xDS response validation errors: [";
  const tail = `] (node ID: ${nodeId})`;
  const full = `${head}${errors.join("; ")}${tail}`;
  if (Buffer.byteLength(full) <= MAX_NACK_DETAIL_BYTES) return full;
  // Room for the listed errors, keeping space for the longest possible "; … N more errors".
  const more = (n: number) => `; … ${n} more errors`;
  const budget = MAX_NACK_DETAIL_BYTES - Buffer.byteLength(head + tail + more(errors.length));
  const listed: string[] = [];
  let used = 0;
  for (const error of errors) {
    const size = Buffer.byteLength(error) + (listed.length > 0 ? 2 : 0);
    if (used + size > budget) break;
    listed.push(error);
    used += size;
  }
  if (listed.length === 0) {
    // Not even the first fits: keep its beginning (cut on a character boundary).
    const first = errors[0] ?? "";
    let cut = Buffer.from(first)
      .subarray(0, Math.max(0, budget - 3))
      .toString();
    if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
    listed.push(`${cut}…`);
  }
  return `${head}${listed.join("; ")}${more(errors.length - listed.length)}${tail}`;
}
