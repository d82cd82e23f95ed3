// README code blocks that the consumer test compiles: fenced with an info string of `ts consumer` (type-checked)
// or `ts consumer-run` (type-checked, then run with node; it must exit 0). Other blocks are prose.

export interface ReadmeBlock {
  /** `<package dir>-<n>`, n counting the README's marked blocks from 1: the file name in the consumer project. */
  readonly id: string;
  readonly run: boolean;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
  readonly code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*(\S*)\s*(.*)$/;

export function readmeBlocks(markdown: string, prefix: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = markdown.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (!open) continue;
    const [, , fence = "```", language, rest = ""] = open;
    const end = lines.findIndex((line, j) => j > i && line.trim() === fence);
    const close = end < 0 ? lines.length : end;
    const tags = rest.split(/\s+/);
    if (
      (language === "ts" || language === "typescript") &&
      (tags.includes("consumer") || tags.includes("consumer-run"))
    ) {
      blocks.push({
        id: `${prefix}-${blocks.length + 1}`,
        run: tags.includes("consumer-run"),
        line: i + 1,
        code: lines.slice(i + 1, close).join("\n"),
      });
    }
    i = close;
  }
  return blocks;
}
