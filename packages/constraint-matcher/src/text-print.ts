import type { Expr, IntRange } from "./expr.js";

/** Characters a key or value may use without quotes. Anything else (or the empty string) is quoted. */
export const BARE_WORD = /^[A-Za-z0-9_.\-/:@+]+$/;
/** Words that start other syntax: quoted when used as keys. Values are never ambiguous, so never need it. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["true", "false", "exists", "in"]);

/**
 * The text syntax of `expr`, e.g. `env=prod && (version=v1 || !exists(canary))` or `shard in [1..10, 20..30]`.
 * `fromText(toText(x))` is structurally equal to `x`: a nested and/or is always parenthesised, so the tree's
 * shape survives. Use `canonicalText` for a stable cache key.
 */
export function toText(expr: Expr): string {
  switch (expr.kind) {
    case "true":
      return "true";
    case "value":
      return `${quoteKey(expr.key)}=${quoteValue(expr.value)}`;
    case "exists":
      return `exists(${quoteKey(expr.key)})`;
    case "range":
      return `${quoteKey(expr.key)} in [${expr.ranges.map(rangeText).join(", ")}]`;
    case "not":
      return `!${operand(expr.child)}`;
    case "and":
      return expr.children.map(operand).join(" && ");
    case "or":
      return expr.children.map(operand).join(" || ");
  }
}

function operand(e: Expr): string {
  return e.kind === "and" || e.kind === "or" ? `(${toText(e)})` : toText(e);
}

function rangeText(r: IntRange): string {
  return r.min === r.max ? `${r.min}` : `${r.min}..${r.max}`;
}

export function quoteKey(key: string): string {
  return BARE_WORD.test(key) && !RESERVED_KEYS.has(key) ? key : quoted(key);
}

export function quoteValue(v: string): string {
  return BARE_WORD.test(v) ? v : quoted(v);
}

/** A double-quoted string: `"` and `\` are backslash-escaped, control characters written as escapes. */
function quoted(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}
