/** Prints rows as an aligned plain-text table (also valid Markdown). */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const out = [
    `\n${title}\n`,
    line(header),
    `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
  ];
  process.stdout.write(`${out.join("\n")}\n`);
}

/** `1234567` → `1,234,567`. */
export function int(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** A ratio with two significant decimals: `12.34x`. */
export function ratio(n: number): string {
  return `${n >= 100 ? n.toFixed(0) : n.toFixed(2)}x`;
}
