// The RBAC engine (A41): a validated RbacFilterConfig compiled once into predicates and an index, then evaluated per
// call. Pure; no I/O. What each rule reads is described on RbacRule (resources/rbac-types.ts) and RbacRequest
// (rbac-types.ts).
//
// The index: each policy gets, when its rules imply one, a requirement a call must meet for the policy to have any
// chance of matching: an exact path (an exact, case-sensitive `url_path` or `:path` matcher it cannot do without), a
// path prefix (a case-sensitive prefix matcher), or a header that must be present (a header matcher other than
// "absent"). Policies are bucketed by it; a call runs the policies without a requirement, the bucket of its path, the
// buckets of its path's prefixes (one map lookup per prefix length in use), and the buckets of the headers it has. A policy that can
// never match (it needs `te`, an empty `or`, envoy metadata...) is left out. The index only skips policies that
// could not match, so the answer is the one evaluating every policy gives (test/rbac-engine.test.ts checks it
// against a plain evaluator).

import type { HeaderMatcher } from "../resources/matchers.js";
import type { RbacFilterConfig, RbacPolicy, RbacRule } from "../resources/rbac-types.js";
import { type CidrRange, type IpValue, networkKey, parseIpValue } from "../shared/ip-address.js";
import type { CompiledRbac, RbacDecision, RbacHeaders, RbacRequest } from "./rbac-types.js";
import { compileHeaderValueMatcher, compileStringMatcher, headerMatcherNeedsHeader } from "./string-match.js";

/** What a predicate reads: the call, and its addresses parsed once, when first needed. */
interface Context {
  readonly request: RbacRequest;
  peerIp: IpValue | null | undefined;
  localIp: IpValue | null | undefined;
}

type Predicate = (context: Context) => boolean;

/** A call's header as A41 reads it (`name` lower-case; `host` already folded into `:authority`). */
export function rbacHeaderValue(request: RbacRequest, name: string): string | undefined {
  switch (name) {
    case ":path":
      return request.path;
    case ":method":
      return readHeader(request.headers, ":method") ?? "POST";
    case "te":
      return undefined;
    case ":authority":
      return readHeader(request.headers, ":authority") ?? readHeader(request.headers, "host");
    default:
      return readHeader(request.headers, name);
  }
}

function readHeader(headers: RbacHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined || typeof value === "string") return value;
  return value.length === 0 ? undefined : value.join(",");
}

/** Header names as the engine keys them: lower-case, `host` as `:authority` (A41: they are one header). */
function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return lower === "host" ? ":authority" : lower;
}

function peerIp(context: Context): IpValue | null {
  if (context.peerIp === undefined) context.peerIp = parseIpValue(context.request.peer.ip) ?? null;
  return context.peerIp;
}

function localIp(context: Context): IpValue | null {
  if (context.localIp === undefined) context.localIp = parseIpValue(context.request.local.ip) ?? null;
  return context.localIp;
}

function rangePredicate(range: CidrRange, address: (context: Context) => IpValue | null): Predicate {
  const network = parseIpValue(range.address) as IpValue;
  const family = range.family;
  const length = range.prefixLen;
  const key = networkKey(network, length);
  return (context) => {
    const ip = address(context);
    return ip !== null && ip.family === family && networkKey(ip, length) === key;
  };
}

function headerPredicate(matcher: HeaderMatcher): Predicate {
  const name = canonicalHeaderName(matcher.name);
  const test = compileHeaderValueMatcher(matcher);
  return (context) => test(rbacHeaderValue(context.request, name));
}

const TRUE: Predicate = () => true;
const FALSE: Predicate = () => false;

function compileRule(rule: RbacRule): Predicate {
  switch (rule.type) {
    case "any":
      return TRUE;
    case "and": {
      const parts = rule.rules.map(compileRule);
      return (context) => {
        for (let i = 0; i < parts.length; i++) if (!parts[i]!(context)) return false;
        return true;
      };
    }
    case "or":
      return compileAny(rule.rules);
    case "not": {
      const inner = compileRule(rule.rule);
      return (context) => !inner(context);
    }
    case "header":
      return headerPredicate(rule.header);
    case "url_path": {
      const test = compileStringMatcher(rule.path);
      return (context) => test(context.request.path);
    }
    case "destination_ip":
      return rangePredicate(rule.range, localIp);
    case "source_ip":
      return rangePredicate(rule.range, peerIp);
    case "destination_port": {
      const { start, end } = rule;
      return (context) => context.request.local.port >= start && context.request.local.port < end;
    }
    case "requested_server_name":
      return rule.matches ? TRUE : FALSE;
    case "metadata":
      return rule.invert ? TRUE : FALSE;
    case "authenticated": {
      if (rule.principalName === undefined) return (context) => context.request.peer.principalNames !== undefined;
      const test = compileStringMatcher(rule.principalName);
      return (context) => {
        const names = context.request.peer.principalNames;
        if (names === undefined) return false;
        for (let i = 0; i < names.length; i++) if (test(names[i]!)) return true;
        return false;
      };
    }
  }
}

/** True when one of `rules` is (an empty list: never). */
function compileAny(rules: readonly RbacRule[]): Predicate {
  const parts = rules.map(compileRule);
  if (parts.length === 1) return parts[0]!;
  return (context) => {
    for (let i = 0; i < parts.length; i++) if (parts[i]!(context)) return true;
    return false;
  };
}

/** Something a call must have for a rule to match: an exact path, a path prefix, or a header. */
type Need = { readonly path: string } | { readonly prefix: string } | { readonly header: string };

/** What a call must have for a rule to match: a Need, nothing known, or it never matches. */
type Requirement = Need | "never" | undefined;

function sameRequirement(a: Requirement, b: Requirement): boolean {
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  if ("path" in a) return "path" in b && a.path === b.path;
  if ("prefix" in a) return "prefix" in b && a.prefix === b.prefix;
  return "header" in b && a.header === b.header;
}

/** How selective a need is: an exact path, then a prefix (the longer the better), then a header. */
function rank(need: Need): number {
  if ("path" in need) return Number.MAX_SAFE_INTEGER;
  if ("prefix" in need) return 1 + need.prefix.length;
  return 0;
}

/** The strongest of several requirements that all hold: never, else the most selective need. */
function strongest(requirements: readonly Requirement[]): Requirement {
  let best: Need | undefined;
  for (const r of requirements) {
    if (r === "never") return r;
    if (r === undefined) continue;
    if (best === undefined || rank(r) > rank(best)) best = r;
  }
  return best;
}

/** The need a path matcher implies (case-sensitive exact or non-empty prefix), if any. */
function pathNeed(type: string, value: string, ignoreCase: boolean): Need | undefined {
  if (ignoreCase) return undefined;
  if (type === "exact") return { path: value };
  return type === "prefix" && value !== "" ? { prefix: value } : undefined;
}

/** A requirement every one of `rules` shares (an empty list never matches). */
function shared(rules: readonly RbacRule[]): Requirement {
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

interface CompiledPolicy {
  readonly name: string;
  readonly matches: Predicate;
  /** The decision when this policy is the one that matched. */
  readonly decision: RbacDecision;
}

interface Engine extends CompiledRbac {
  readonly always: readonly CompiledPolicy[];
  readonly byPath: ReadonlyMap<string, readonly CompiledPolicy[]>;
  /** Prefix lengths in use, each with its prefix → policies. */
  readonly byPrefix: readonly {
    readonly length: number;
    readonly policies: ReadonlyMap<string, readonly CompiledPolicy[]>;
  }[];
  readonly byHeader: ReadonlyMap<string, readonly CompiledPolicy[]>;
  /** The decision when no policy matched. */
  readonly otherwise: RbacDecision;
}

const ALLOWED: RbacDecision = Object.freeze({ allowed: true });
const NO_ALLOW_MATCH: RbacDecision = Object.freeze({
  allowed: false,
  message: "incoming RPC did not match an allow policy",
});

function push(map: Map<string, CompiledPolicy[]>, key: string, policy: CompiledPolicy): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [policy]);
  else list.push(policy);
}

/** Compiles a validated RBAC filter config (a Listener's, or a route's override) for `evaluateRbac`. */
export function compileRbac(config: RbacFilterConfig): CompiledRbac {
  const rules = config.rules;
  const always: CompiledPolicy[] = [];
  const byPath = new Map<string, CompiledPolicy[]>();
  const byPrefix = new Map<number, Map<string, CompiledPolicy[]>>();
  const byHeader = new Map<string, CompiledPolicy[]>();
  if (rules !== undefined) {
    for (const policy of rules.policies) {
      const requirement = strongest([shared(policy.permissions), shared(policy.principals)]);
      if (requirement === "never") continue;
      const compiled = compilePolicy(policy, rules.action);
      if (requirement === undefined) always.push(compiled);
      else if ("path" in requirement) push(byPath, requirement.path, compiled);
      else if ("header" in requirement) push(byHeader, requirement.header, compiled);
      else {
        const length = requirement.prefix.length;
        let bucket = byPrefix.get(length);
        if (bucket === undefined) {
          bucket = new Map();
          byPrefix.set(length, bucket);
        }
        push(bucket, requirement.prefix, compiled);
      }
    }
  }
  const engine: Engine = {
    action: rules === undefined ? "none" : rules.action,
    policyCount: rules === undefined ? 0 : rules.policies.length,
    always,
    byPath,
    byPrefix: [...byPrefix].sort(([a], [b]) => a - b).map(([length, policies]) => ({ length, policies })),
    byHeader,
    otherwise: rules?.action === "ALLOW" ? NO_ALLOW_MATCH : ALLOWED,
  };
  return Object.freeze(engine);
}

function compilePolicy(policy: RbacPolicy, action: "ALLOW" | "DENY"): CompiledPolicy {
  const permissions = compileAny(policy.permissions);
  const principals = compileAny(policy.principals);
  const decision: RbacDecision = Object.freeze(
    action === "ALLOW"
      ? { allowed: true, policy: policy.name }
      : { allowed: false, policy: policy.name, message: `incoming RPC matched a deny policy "${policy.name}"` },
  );
  return { name: policy.name, matches: (context) => permissions(context) && principals(context), decision };
}

function firstMatch(policies: readonly CompiledPolicy[] | undefined, context: Context): CompiledPolicy | undefined {
  if (policies === undefined) return undefined;
  for (let i = 0; i < policies.length; i++) if (policies[i]!.matches(context)) return policies[i];
  return undefined;
}

/** The policy of a prefix bucket the call's path reaches that matches. */
function prefixMatch(engine: Engine, context: Context): CompiledPolicy | undefined {
  const path = context.request.path;
  for (const { length, policies } of engine.byPrefix) {
    if (path.length < length) break;
    const found = firstMatch(policies.get(path.slice(0, length)), context);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The policy of a header bucket the call can reach that matches. */
function headerMatch(engine: Engine, context: Context): CompiledPolicy | undefined {
  const headers = context.request.headers;
  for (const name in headers) {
    if (headers[name] === undefined) continue;
    let key = name;
    if (name === "host") {
      if (headers[":authority"] !== undefined) continue;
      key = ":authority";
    }
    const found = firstMatch(engine.byHeader.get(key), context);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Evaluates one RBAC filter for one call: ALLOW lets the call through when a policy matches, DENY stops it when one
 * does; a filter without rules lets everything through. Allocates nothing but the addresses it parses.
 */
export function evaluateRbac(compiled: CompiledRbac, request: RbacRequest): RbacDecision {
  const engine = compiled as Engine;
  if (engine.action === "none") return ALLOWED;
  const context: Context = { request, peerIp: undefined, localIp: undefined };
  const found =
    firstMatch(engine.always, context) ??
    (engine.byPath.size === 0 ? undefined : firstMatch(engine.byPath.get(request.path), context)) ??
    (engine.byPrefix.length === 0 ? undefined : prefixMatch(engine, context)) ??
    (engine.byHeader.size === 0 ? undefined : headerMatch(engine, context));
  return found === undefined ? engine.otherwise : found.decision;
}
