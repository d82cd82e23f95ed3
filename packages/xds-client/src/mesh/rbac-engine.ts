// The RBAC engine (A41): a validated RbacFilterConfig compiled once into predicates and an index, then evaluated per
// call. Pure; no I/O. What each rule reads is described on RbacRule (resources/rbac-types.ts) and RbacRequest
// (rbac-types.ts).
//
// The index: each policy gets, when its rules imply one, a requirement a call must meet for the policy to have any
// chance of matching: an exact path (an exact, case-sensitive `url_path` or `:path` matcher it cannot do without), a
// path prefix or suffix (a case-sensitive, non-empty prefix or suffix matcher), or a header that must be present (a
// header matcher other than "absent"). Policies are bucketed by it; a call runs the policies without a requirement,
// the bucket of its path, the buckets of its path's prefixes and suffixes (one map lookup per length in use), and
// the buckets of the headers it has. A policy that can never match (it needs `te`, an empty `or`, envoy
// metadata...) is left out. The index only skips policies that could not match, and every bucket keeps the policies
// in their order (the config's: by name), so the policy named is the first one that matches, as evaluating every
// policy in order gives (test/rbac-engine.test.ts checks both against a plain evaluator).

import type { HeaderMatcher } from "../resources/matchers.js";
import type { RbacFilterConfig, RbacPolicy, RbacRule } from "../resources/rbac-types.js";
import { type CidrRange, type IpValue, networkKey, parseIpValue } from "../shared/ip-address.js";
import { compilePathGates, type PathGate, type PathGates } from "./path-gates.js";
import { canonicalHeaderName, shared, strongest } from "./rbac-requirements.js";
import type { CompiledRbac, RbacDecision, RbacHeaders, RbacRequest } from "./rbac-types.js";
import { compileHeaderValueMatcher, compileStringMatcher } from "./string-match.js";

/** What a predicate reads: the call, and its addresses and lower-case path made once, when first needed. */
interface Context {
  readonly request: RbacRequest;
  peerIp: IpValue | null | undefined;
  localIp: IpValue | null | undefined;
  lowerPath: string | undefined;
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

function peerIp(context: Context): IpValue | null {
  if (context.peerIp === undefined) context.peerIp = parseIpValue(context.request.peer.ip) ?? null;
  return context.peerIp;
}

function lowerPath(context: Context): string {
  if (context.lowerPath === undefined) context.lowerPath = context.request.path.toLowerCase();
  return context.lowerPath;
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
      const m = rule.path;
      if (m.type !== "safe_regex" && m.ignoreCase) {
        // The same test on the path lower-cased once per call, rather than once per matcher.
        const test = compileStringMatcher({ type: m.type, value: m.value.toLowerCase(), ignoreCase: false });
        return (context) => test(lowerPath(context));
      }
      const test = compileStringMatcher(m);
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

interface CompiledPolicy {
  /** Its place in the config's order: the first policy that matches is the one named. */
  readonly index: number;
  readonly name: string;
  readonly matches: Predicate;
  /** The decision when this policy is the one that matched. */
  readonly decision: RbacDecision;
}

/** Policies keyed by a path's prefix or suffix of one length. */
interface Affixes {
  readonly length: number;
  readonly policies: ReadonlyMap<string, readonly CompiledPolicy[]>;
}

interface Engine extends CompiledRbac {
  /** Every list below is in policy order. */
  readonly always: readonly CompiledPolicy[];
  readonly byPath: ReadonlyMap<string, readonly CompiledPolicy[]>;
  /** Prefix lengths in use, shortest first, each with its prefix → policies. */
  readonly byPrefix: readonly Affixes[];
  /** Suffix lengths in use, shortest first, each with its suffix → policies. */
  readonly bySuffix: readonly Affixes[];
  readonly byHeader: ReadonlyMap<string, readonly CompiledPolicy[]>;
  /** Policies whose need is a path gate: gated[i]'s gate is the i-th of `gates`. */
  readonly gated: readonly CompiledPolicy[];
  readonly gates: PathGates | undefined;
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

function pushAffix(byLength: Map<number, Map<string, CompiledPolicy[]>>, affix: string, policy: CompiledPolicy): void {
  let bucket = byLength.get(affix.length);
  if (bucket === undefined) {
    bucket = new Map();
    byLength.set(affix.length, bucket);
  }
  push(bucket, affix, policy);
}

function affixes(byLength: Map<number, Map<string, CompiledPolicy[]>>): Affixes[] {
  return [...byLength].sort(([a], [b]) => a - b).map(([length, policies]) => ({ length, policies }));
}

/**
 * The gated policies with their compiled gates; when the gates are too many to compile, no gates: those policies
 * join `always` (in policy order), where they run one by one.
 */
function gatesOf(
  always: CompiledPolicy[],
  gated: CompiledPolicy[],
  gates: readonly PathGate[],
): { always: readonly CompiledPolicy[]; gated: readonly CompiledPolicy[]; gates: PathGates | undefined } {
  if (gated.length === 0) return { always, gated, gates: undefined };
  const compiled = compilePathGates(gates);
  if (compiled !== undefined) return { always, gated, gates: compiled };
  return { always: [...always, ...gated].sort((a, b) => a.index - b.index), gated: [], gates: undefined };
}

/** Compiles a validated RBAC filter config (a Listener's, or a route's override) for `evaluateRbac`. */
export function compileRbac(config: RbacFilterConfig): CompiledRbac {
  const rules = config.rules;
  const always: CompiledPolicy[] = [];
  const byPath = new Map<string, CompiledPolicy[]>();
  const byPrefix = new Map<number, Map<string, CompiledPolicy[]>>();
  const bySuffix = new Map<number, Map<string, CompiledPolicy[]>>();
  const byHeader = new Map<string, CompiledPolicy[]>();
  const gated: CompiledPolicy[] = [];
  const gates: PathGate[] = [];
  if (rules !== undefined) {
    for (const [index, policy] of rules.policies.entries()) {
      const requirement = strongest([shared(policy.permissions), shared(policy.principals)]);
      if (requirement === "never") continue;
      const compiled = compilePolicy(policy, index, rules.action);
      if (requirement === undefined) always.push(compiled);
      else if ("path" in requirement) push(byPath, requirement.path, compiled);
      else if ("header" in requirement) push(byHeader, requirement.header, compiled);
      else if ("prefix" in requirement) pushAffix(byPrefix, requirement.prefix, compiled);
      else if ("suffix" in requirement) pushAffix(bySuffix, requirement.suffix, compiled);
      else {
        // Gate i belongs to gated[i].
        gated.push(compiled);
        gates.push(requirement.gate);
      }
    }
  }
  const engine: Engine = {
    action: rules === undefined ? "none" : rules.action,
    policyCount: rules === undefined ? 0 : rules.policies.length,
    byPath,
    byPrefix: affixes(byPrefix),
    bySuffix: affixes(bySuffix),
    byHeader,
    ...gatesOf(always, gated, gates),
    otherwise: rules?.action === "ALLOW" ? NO_ALLOW_MATCH : ALLOWED,
  };
  return Object.freeze(engine);
}

function compilePolicy(policy: RbacPolicy, index: number, action: "ALLOW" | "DENY"): CompiledPolicy {
  const permissions = compileAny(policy.permissions);
  const principals = compileAny(policy.principals);
  const decision: RbacDecision = Object.freeze(
    action === "ALLOW"
      ? { allowed: true, policy: policy.name }
      : { allowed: false, policy: policy.name, message: `incoming RPC matched a deny policy "${policy.name}"` },
  );
  return { index, name: policy.name, matches: (context) => permissions(context) && principals(context), decision };
}

/**
 * The first policy of `policies` (in policy order) that matches and comes before `best`; else `best`. Policies past
 * `best` are not run: they could not be the first match.
 */
function firstBefore(
  policies: readonly CompiledPolicy[] | undefined,
  context: Context,
  best: CompiledPolicy | undefined,
): CompiledPolicy | undefined {
  if (policies === undefined) return best;
  const limit = best === undefined ? Number.POSITIVE_INFINITY : best.index;
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i]!;
    if (policy.index >= limit) return best;
    if (policy.matches(context)) return policy;
  }
  return best;
}

/**
 * The first gated policy before `best` whose gate the path passes and that matches; else `best`. Only the policies
 * of the gates passed run (gate i is gated[i], and both are in policy order).
 */
function gatedBefore(engine: Engine, context: Context, best: CompiledPolicy | undefined): CompiledPolicy | undefined {
  const policies = engine.gated;
  const limit = best === undefined ? Number.POSITIVE_INFINITY : best.index;
  if (policies[0]!.index >= limit) return best;
  const gates = engine.gates!;
  const count = gates.run(context.request.path);
  const hits = gates.hits;
  for (let i = 0; i < count; i++) {
    const policy = policies[hits[i]!]!;
    if (policy.index >= limit) return best;
    if (policy.matches(context)) return policy;
  }
  return best;
}

/** The first policy, before `best`, among the affix buckets the call's path reaches. */
function affixMatch(
  buckets: readonly Affixes[],
  suffix: boolean,
  context: Context,
  best: CompiledPolicy | undefined,
): CompiledPolicy | undefined {
  const path = context.request.path;
  for (let i = 0; i < buckets.length; i++) {
    const { length, policies } = buckets[i]!;
    if (path.length < length) break;
    const key = suffix ? path.slice(path.length - length) : path.slice(0, length);
    best = firstBefore(policies.get(key), context, best);
  }
  return best;
}

/** The first policy, before `best`, among the header buckets of the headers the call has. */
function headerMatch(engine: Engine, context: Context, best: CompiledPolicy | undefined): CompiledPolicy | undefined {
  const headers = context.request.headers;
  for (const name in headers) {
    if (headers[name] === undefined) continue;
    let key = name;
    if (name === "host") {
      if (headers[":authority"] !== undefined) continue;
      key = ":authority";
    }
    best = firstBefore(engine.byHeader.get(key), context, best);
  }
  return best;
}

/**
 * Evaluates one RBAC filter for one call: ALLOW lets the call through when a policy matches, DENY stops it when one
 * does; a filter without rules lets everything through. The decision names the first policy that matches.
 * Allocates nothing but the addresses it parses and the path slices it looks up.
 */
export function evaluateRbac(compiled: CompiledRbac, request: RbacRequest): RbacDecision {
  const engine = compiled as Engine;
  if (engine.action === "none") return ALLOWED;
  const context: Context = { request, peerIp: undefined, localIp: undefined, lowerPath: undefined };
  let best = firstBefore(engine.always, context, undefined);
  if (engine.byPath.size > 0) best = firstBefore(engine.byPath.get(request.path), context, best);
  if (engine.byPrefix.length > 0) best = affixMatch(engine.byPrefix, false, context, best);
  if (engine.bySuffix.length > 0) best = affixMatch(engine.bySuffix, true, context, best);
  if (engine.byHeader.size > 0) best = headerMatch(engine, context, best);
  if (engine.gated.length > 0) best = gatedBefore(engine, context, best);
  return best === undefined ? engine.otherwise : best.decision;
}
