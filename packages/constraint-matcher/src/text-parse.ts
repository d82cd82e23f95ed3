import { ConstraintError } from "./constraint-error.js";
import {
  and,
  type Expr,
  exists as existsExpr,
  type IntRange,
  MAX_UINT64,
  makeRange,
  not,
  or,
  range,
  TRUE,
  value,
} from "./expr.js";
import { RESERVED_KEYS } from "./text-print.js";

// Grammar (whitespace between tokens is free; `!` binds tighter than `&&`, which binds tighter than `||`):
//   or      := and ("||" and)*
//   and     := unary ("&&" unary)*
//   unary   := "!" unary | primary
//   primary := "(" or ")" | "true" | "exists" "(" string ")" | string ("=" string | "!=" string | "in" ranges)
//   ranges  := "[" uint (".." uint)? ("," uint (".." uint)?)* "]"
//   string  := bare word [A-Za-z0-9_.-/:@+]+ | double-quoted with \" \\ \n \r \t \uXXXX escapes

interface State {
  readonly text: string;
  pos: number;
}

/**
 * Parses the text syntax (see `toText`). Throws a `ConstraintError` whose `column` is 1-based. A nested
 * parenthesised and/or stays a nested node, so `fromText(toText(x))` equals `x`.
 */
export function fromText(text: string): Expr {
  if (typeof text !== "string") throw new ConstraintError("constraint text must be a string");
  const s: State = { text, pos: 0 };
  const expr = parseOr(s);
  skipSpace(s);
  if (s.pos < text.length) fail(s, `expected "&&", "||" or the end, found ${found(s)}`);
  return expr;
}

function parseOr(s: State): Expr {
  const items = [parseAnd(s)];
  while (eat(s, "||")) items.push(parseAnd(s));
  return items.length === 1 ? items[0]! : or(items);
}

function parseAnd(s: State): Expr {
  const items = [parseUnary(s)];
  while (eat(s, "&&")) items.push(parseUnary(s));
  return items.length === 1 ? items[0]! : and(items);
}

function parseUnary(s: State): Expr {
  skipSpace(s);
  if (s.text[s.pos] === "!") {
    s.pos++;
    return not(parseUnary(s));
  }
  return parsePrimary(s);
}

function parsePrimary(s: State): Expr {
  skipSpace(s);
  const start = s.pos;
  const ch = s.text[s.pos];
  if (ch === "(") {
    s.pos++;
    const inner = parseOr(s);
    expect(s, ")");
    return inner;
  }
  if (ch === '"') return parseKeyTail(s, readQuoted(s));
  const word = readBare(s);
  if (word === "") fail(s, `expected a constraint, found ${found(s)}`);
  if (word === "exists") {
    expect(s, "(");
    skipSpace(s);
    const key = readString(s);
    expect(s, ")");
    return existsExpr(key);
  }
  if (RESERVED_KEYS.has(word)) {
    skipSpace(s);
    if (word === "true" && !startsOperator(s)) return TRUE;
    fail(s, `"${word}" is a reserved word: quote it to use it as a key`, start);
  }
  return parseKeyTail(s, word);
}

function startsOperator(s: State): boolean {
  const rest = s.text.slice(s.pos, s.pos + 3);
  return rest.startsWith("=") || rest.startsWith("!=") || isWordAt(s, "in");
}

function parseKeyTail(s: State, key: string): Expr {
  skipSpace(s);
  if (eat(s, "!=")) return not(value(key, readValue(s)));
  if (s.text[s.pos] === "=") {
    s.pos++;
    return value(key, readValue(s));
  }
  if (isWordAt(s, "in")) {
    s.pos += 2;
    const ranges = readRanges(s);
    return range(key, ...ranges.map((r): [bigint, bigint] => [r.min, r.max]));
  }
  return fail(s, `expected "=", "!=" or "in" after key ${JSON.stringify(key)}, found ${found(s)}`);
}

function readValue(s: State): string {
  skipSpace(s);
  return readString(s);
}

function readString(s: State): string {
  if (s.text[s.pos] === '"') return readQuoted(s);
  const word = readBare(s);
  if (word === "") fail(s, `expected a bare word or a "quoted string", found ${found(s)}`);
  return word;
}

function readRanges(s: State): IntRange[] {
  expect(s, "[");
  const out: IntRange[] = [];
  do {
    skipSpace(s);
    const start = s.pos;
    const min = readUint(s);
    skipSpace(s);
    const max = eat(s, "..") ? readUint(s) : min;
    if (min > max) fail(s, `range ${min}..${max} has min > max`, start);
    out.push(makeRange(min, max, "range"));
    skipSpace(s);
  } while (eat(s, ","));
  expect(s, "]");
  return out;
}

function readUint(s: State): bigint {
  skipSpace(s);
  const start = s.pos;
  while (isDigit(s.text.charCodeAt(s.pos))) s.pos++;
  if (s.pos === start) fail(s, `expected an unsigned integer, found ${found(s)}`);
  const n = BigInt(s.text.slice(start, s.pos));
  if (n > MAX_UINT64) fail(s, `integer ${n} exceeds the uint64 maximum ${MAX_UINT64}`, start);
  return n;
}

function readBare(s: State): string {
  const start = s.pos;
  while (s.pos < s.text.length && isBareChar(s.text.charCodeAt(s.pos))) s.pos++;
  return s.text.slice(start, s.pos);
}

const ESCAPES: Readonly<Record<string, string>> = { '"': '"', "\\": "\\", n: "\n", r: "\r", t: "\t" };

function readQuoted(s: State): string {
  const open = s.pos;
  s.pos++;
  let out = "";
  for (;;) {
    if (s.pos >= s.text.length) fail(s, "unterminated quoted string", open);
    const ch = s.text[s.pos]!;
    if (ch === '"') {
      s.pos++;
      return out;
    }
    if (ch !== "\\") {
      out += ch;
      s.pos++;
      continue;
    }
    const esc = s.text[s.pos + 1];
    if (esc === "u" && /^[0-9a-fA-F]{4}$/.test(s.text.slice(s.pos + 2, s.pos + 6))) {
      out += String.fromCharCode(Number.parseInt(s.text.slice(s.pos + 2, s.pos + 6), 16));
      s.pos += 6;
    } else if (esc !== undefined && esc in ESCAPES) {
      out += ESCAPES[esc];
      s.pos += 2;
    } else {
      fail(s, `bad escape ${JSON.stringify(`\\${esc ?? ""}`)} in quoted string`);
    }
  }
}

function isBareChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || // a-z
    (c >= 65 && c <= 90) || // A-Z
    isDigit(c) ||
    c === 95 || // _
    c === 46 || // .
    c === 45 || // -
    c === 47 || // /
    c === 58 || // :
    c === 64 || // @
    c === 43 // +
  );
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isWordAt(s: State, word: string): boolean {
  return s.text.startsWith(word, s.pos) && !isBareChar(s.text.charCodeAt(s.pos + word.length));
}

function skipSpace(s: State): void {
  while (s.pos < s.text.length && /\s/.test(s.text[s.pos]!)) s.pos++;
}

function eat(s: State, token: string): boolean {
  skipSpace(s);
  if (!s.text.startsWith(token, s.pos)) return false;
  s.pos += token.length;
  return true;
}

function expect(s: State, token: string): void {
  if (!eat(s, token)) fail(s, `expected "${token}", found ${found(s)}`);
}

function found(s: State): string {
  if (s.pos >= s.text.length) return "the end of the text";
  return JSON.stringify(s.text.slice(s.pos, s.pos + 8));
}

function fail(s: State, reason: string, at: number = s.pos): never {
  throw new ConstraintError(reason, { column: at + 1 });
}
