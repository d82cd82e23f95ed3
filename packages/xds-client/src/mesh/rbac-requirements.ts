// What a call must have for an RBAC rule (A41) to match, worked out once per config for the engine's index
// (rbac-engine.ts): an exact path, a path prefix or suffix, a header (index keys), a path gate (path-gates.ts), or
// "never". A requirement is only ever one the rule cannot match without, so the index skips nothing that could match.
import type { RbacRule } from "../resources/rbac-types.js";
import type { PathGate } from "./path-gates.js";
import { headerMatcherNeedsHeader } from "./string-match.js";

/** Header names as the engine keys them: lower-case, `host` as `:authority` (A41: they are one header). */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return lower === "host" ? ":authority" : lower;
}

/**
 * Something a call must have for a rule to match: an exact path, a path prefix or suffix, a header (each an index
 * key), or a path gate (a case-sensitive `contains`, or any case-insensitive test: all of a config's gates are run
 * in one pass over the path, path-gates.ts).
 */
export type Need =
  | { readonly path: string }
  | { readonly prefix: string }
  | { readonly suffix: string }
  | { readonly header: string }
  | { readonly gate: PathGate };

/** What a call must have for a rule to match: a Need, nothing known, or it never matches. */
export type Requirement = Need | "never" | undefined;

function sameRequirement(a: Requirement, b: Requirement): boolean {
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  if ("path" in a) return "path" in b && a.path === b.path;
  if ("prefix" in a) return "prefix" in b && a.prefix === b.prefix;
  if ("suffix" in a) return "suffix" in b && a.suffix === b.suffix;
  if ("gate" in a) {
    return "gate" in b && a.gate.kind === b.gate.kind && a.gate.text === b.gate.text && a.gate.lower === b.gate.lower;
  }
  return "header" in b && a.header === b.header;
}

/**
 * How selective a need is: an exact path, then a prefix or suffix (the longer the better), then a header, then a
 * gate (an index key skips a policy without running anything; a gate is still one test per call).
 */
function rank(need: Need): number {
  if ("path" in need) return Number.MAX_SAFE_INTEGER;
  if ("prefix" in need) return 1 + need.prefix.length;
  if ("suffix" in need) return 1 + need.suffix.length;
  if ("gate" in need) return -1;
  return 0;
}

/** The strongest of several requirements that all hold: never, else the most selective need. */
export function strongest(requirements: readonly Requirement[]): Requirement {
  let best: Need | undefined;
  for (const r of requirements) {
    if (r === "never") return r;
    if (r === undefined) continue;
    if (best === undefined || rank(r) > rank(best)) best = r;
  }
  return best;
}

/**
 * The need a path matcher implies, if any: case-sensitive exact, non-empty prefix or suffix (index keys);
 * case-sensitive non-empty contains, or any case-insensitive test (gates).
 */
function pathNeed(type: string, value: string, ignoreCase: boolean): Need | undefined {
  if (type !== "exact" && type !== "prefix" && type !== "suffix" && type !== "contains") return undefined;
  if (ignoreCase) {
    // "" in any case is "" only.
    if (value === "") return type === "exact" ? { path: "" } : undefined;
    return { gate: { kind: type, text: value.toLowerCase(), lower: true } };
  }
  if (type === "exact") return { path: value };
  if (value === "") return undefined;
  if (type === "prefix") return { prefix: value };
  if (type === "suffix") return { suffix: value };
  return { gate: { kind: type, text: value, lower: false } };
}

/** A requirement every one of `rules` shares (an empty list never matches). */
export function shared(rules: readonly RbacRule[]): Requirement {
  let common: Requirement = "never";
  for (const rule of rules) {
    const r = requirementOf(rule);
    if (r === "never") continue;
    if (r === undefined) return undefined;
    if (common === "never") common = r;
    else if (!sameRequirement(common, r)) return undefined;
  }
  return common;
}

function requirementOf(rule: RbacRule): Requirement {
  switch (rule.type) {
    case "and":
      return strongest(rule.rules.map(requirementOf));
    case "or":
      return shared(rule.rules);
    case "header": {
      const matcher = rule.header;
      if (!headerMatcherNeedsHeader(matcher)) return undefined;
      const name = canonicalHeaderName(matcher.name);
      if (name === "te") return "never";
      if (name === ":path") {
        if (matcher.invert || !("value" in matcher)) return undefined;
        return pathNeed(matcher.type, matcher.value, matcher.ignoreCase);
      }
      return name === ":method" ? undefined : { header: name };
    }
    case "url_path": {
      const m = rule.path;
      return m.type === "safe_regex" ? undefined : pathNeed(m.type, m.value, m.ignoreCase);
    }
    case "requested_server_name":
      return rule.matches ? undefined : "never";
    case "metadata":
      return rule.invert ? undefined : "never";
    default:
      return undefined;
  }
}
