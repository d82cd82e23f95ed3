// The RBAC engine (A41): its reading of a call (headers, addresses, principal names), its decisions, and a property
// test of the compiled, indexed engine against a plain evaluator that walks every policy's rules.
import { BlockList, isIPv6 } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRbac, evaluateRbac } from "../src/mesh/rbac-engine.js";
import type { RbacRequest } from "../src/mesh/rbac-types.js";
import type { HeaderMatcher, StringMatcher } from "../src/resources/matchers.js";
import type { RbacFilterConfig, RbacPolicy, RbacRule } from "../src/resources/rbac-types.js";

const request = (overrides: Partial<RbacRequest> = {}): RbacRequest => ({
  path: "/pkg.Svc/Get",
  headers: { ":authority": "svc.example", "content-type": "application/grpc", "x-user": "alice" },
  peer: { ip: "10.0.0.7", port: 40000, principalNames: undefined },
  local: { ip: "10.0.0.1", port: 8080 },
  ...overrides,
});

const exact = (value: string, ignoreCase = false): StringMatcher => ({ type: "exact", value, ignoreCase });
const header = (h: Partial<HeaderMatcher> & { name: string }): RbacRule => ({
  type: "header",
  header: { invert: false, type: "exact", value: "", ignoreCase: false, ...h } as HeaderMatcher,
});
const policy = (name: string, permissions: RbacRule[], principals: RbacRule[] = [{ type: "any" }]): RbacPolicy => ({
  name,
  permissions,
  principals,
});
const allow = (...policies: RbacPolicy[]): RbacFilterConfig => ({ rules: { action: "ALLOW", policies } });
const deny = (...policies: RbacPolicy[]): RbacFilterConfig => ({ rules: { action: "DENY", policies } });
const decide = (config: RbacFilterConfig, req: RbacRequest = request()) => evaluateRbac(compileRbac(config), req);

describe("the RBAC engine's decisions", () => {
  it("ALLOW lets a call through only when a policy matches; DENY stops it only then; no rules lets all through", () => {
    const user = policy("alice", [header({ name: "x-user", value: "alice" })]);
    expect(decide(allow(user))).toEqual({ allowed: true, policy: "alice" });
    expect(decide(allow(user), request({ headers: {} }))).toEqual({
      allowed: false,
      message: "incoming RPC did not match an allow policy",
    });
    expect(decide(allow())).toEqual({ allowed: false, message: "incoming RPC did not match an allow policy" });
    expect(decide(deny(user))).toEqual({
      allowed: false,
      policy: "alice",
      message: 'incoming RPC matched a deny policy "alice"',
    });
    expect(decide(deny(user), request({ headers: {} }))).toEqual({ allowed: true });
    expect(decide(deny())).toEqual({ allowed: true });
    expect(decide({})).toEqual({ allowed: true });
    expect(compileRbac({}).action).toBe("none");
    expect(compileRbac(allow(user)).policyCount).toBe(1);
  });

  it("a policy needs a matching permission and a matching principal; empty lists never match", () => {
    const ok: RbacRule = { type: "any" };
    expect(decide(allow(policy("p", [ok], [ok]))).allowed).toBe(true);
    expect(decide(allow(policy("p", [], [ok]))).allowed).toBe(false);
    expect(decide(allow(policy("p", [ok], []))).allowed).toBe(false);
    expect(decide(allow(policy("p", [{ type: "and", rules: [] }]))).allowed).toBe(true);
    expect(decide(allow(policy("p", [{ type: "or", rules: [] }]))).allowed).toBe(false);
    expect(decide(allow(policy("p", [{ type: "not", rule: { type: "or", rules: [] } }]))).allowed).toBe(true);
  });

  describe("reads a call's headers as A41 says", () => {
    const allowedWith = (rule: RbacRule, req?: Partial<RbacRequest>) =>
      decide(allow(policy("p", [rule])), request(req)).allowed;

    it("several values are joined with a comma, no space", () => {
      expect(allowedWith(header({ name: "x-list", value: "a,b" }), { headers: { "x-list": ["a", "b"] } })).toBe(true);
      expect(allowedWith(header({ name: "x-list", value: "a, b" }), { headers: { "x-list": ["a", "b"] } })).toBe(false);
    });

    it(":method reads POST when absent; te is never present; host and :authority are one header", () => {
      expect(allowedWith(header({ name: ":method", value: "POST" }))).toBe(true);
      expect(allowedWith(header({ name: ":method", value: "GET" }), { headers: { ":method": "GET" } })).toBe(true);
      expect(
        allowedWith(header({ name: "te", type: "present", present: true } as never), { headers: { te: "trailers" } }),
      ).toBe(false);
      expect(allowedWith(header({ name: "te", value: "trailers" }), { headers: { te: "trailers" } })).toBe(false);
      expect(allowedWith(header({ name: "host", value: "svc.example" }))).toBe(true);
      expect(allowedWith(header({ name: ":authority", value: "h2" }), { headers: { host: "h2" } })).toBe(true);
      expect(allowedWith(header({ name: "Host", value: "h2" }), { headers: { host: "h2" } })).toBe(true);
      expect(allowedWith(header({ name: "host", value: "h2" }), { headers: { ":authority": "h1", host: "h2" } })).toBe(
        false,
      );
    });

    it(":path is the call's path; content-type is the client's; a header matcher never matches an absent header", () => {
      expect(allowedWith(header({ name: ":path", value: "/pkg.Svc/Get" }))).toBe(true);
      expect(
        allowedWith(header({ name: "content-type", value: "application/grpc+proto" }), {
          headers: { "content-type": "application/grpc+proto" },
        }),
      ).toBe(true);
      expect(allowedWith(header({ name: "x-missing", value: "v", invert: true }))).toBe(false);
      expect(allowedWith(header({ name: "x-missing", type: "present", present: false } as never))).toBe(true);
      expect(allowedWith(header({ name: "x-user", value: "bob", invert: true }))).toBe(true);
    });

    it("range, regex and case-insensitive matchers", () => {
      expect(
        allowedWith(header({ name: "x-n", type: "range", start: 10n, end: 20n } as never), {
          headers: { "x-n": "19" },
        }),
      ).toBe(true);
      expect(
        allowedWith(header({ name: "x-n", type: "range", start: 10n, end: 20n } as never), {
          headers: { "x-n": "20" },
        }),
      ).toBe(false);
      expect(allowedWith(header({ name: "x-user", type: "safe_regex", regex: "al.*" } as never))).toBe(true);
      expect(allowedWith(header({ name: "x-user", type: "safe_regex", regex: "l.*" } as never))).toBe(false);
      expect(allowedWith(header({ name: "x-user", type: "prefix", value: "AL", ignoreCase: true }))).toBe(true);
    });
  });

  describe("reads a call's connection", () => {
    const allowedWith = (rule: RbacRule, req?: Partial<RbacRequest>) =>
      decide(allow(policy("p", [{ type: "any" }], [rule])), request(req)).allowed;
    const v4 = (address: string, prefixLen: number) => ({ family: 4 as const, address, prefixLen });

    it("source and destination ranges; an IPv4-mapped IPv6 peer counts as IPv4; /0 keeps its family", () => {
      expect(allowedWith({ type: "source_ip", range: v4("10.0.0.0", 8) })).toBe(true);
      expect(
        allowedWith(
          { type: "source_ip", range: v4("10.0.0.0", 8) },
          { peer: { ip: "::ffff:10.1.1.1", port: 1, principalNames: undefined } },
        ),
      ).toBe(true);
      expect(
        allowedWith(
          { type: "source_ip", range: v4("0.0.0.0", 0) },
          { peer: { ip: "2001:db8::1", port: 1, principalNames: undefined } },
        ),
      ).toBe(false);
      expect(
        allowedWith(
          { type: "source_ip", range: { family: 6, address: "::", prefixLen: 0 } },
          { peer: { ip: "2001:db8::1", port: 1, principalNames: undefined } },
        ),
      ).toBe(true);
      const destination = (rule: RbacRule, req?: Partial<RbacRequest>) =>
        decide(allow(policy("p", [rule])), request(req)).allowed;
      expect(destination({ type: "destination_ip", range: v4("10.0.0.1", 32) })).toBe(true);
      expect(destination({ type: "destination_ip", range: v4("10.0.0.2", 32) })).toBe(false);
      expect(destination({ type: "destination_port", start: 8080, end: 8081 })).toBe(true);
      expect(destination({ type: "destination_port", start: 9000, end: 9100 })).toBe(false);
    });

    it("authenticated: TLS only; principal names in A41's order; no certificate is the empty name", () => {
      const tls = (principalNames: readonly string[] | undefined) => ({
        peer: { ip: "10.0.0.7", port: 1, principalNames },
      });
      expect(allowedWith({ type: "authenticated" }, tls(undefined))).toBe(false);
      expect(allowedWith({ type: "authenticated" }, tls([""]))).toBe(true);
      const spiffe: RbacRule = {
        type: "authenticated",
        principalName: { type: "prefix", value: "spiffe://td/ns/a/", ignoreCase: false },
      };
      expect(allowedWith(spiffe, tls(["spiffe://td/ns/b/sa/x", "spiffe://td/ns/a/sa/y"]))).toBe(true);
      expect(allowedWith(spiffe, tls([""]))).toBe(false);
      expect(allowedWith({ type: "authenticated", principalName: exact("") }, tls([""]))).toBe(true);
    });

    it("metadata never matches (inverted: always); requested_server_name is decided at decoding", () => {
      expect(allowedWith({ type: "metadata", invert: false })).toBe(false);
      expect(allowedWith({ type: "metadata", invert: true })).toBe(true);
      expect(allowedWith({ type: "not", rule: { type: "metadata", invert: false } })).toBe(true);
      expect(allowedWith({ type: "requested_server_name", matches: true })).toBe(true);
      expect(allowedWith({ type: "requested_server_name", matches: false })).toBe(false);
    });
  });

  it("indexes policies by the path, path prefix or header they need, so a call runs only the ones it can match", () => {
    const policies = Array.from({ length: 100 }, (_, i) =>
      policy(`p${i}`, [
        i % 2 === 0 ? { type: "url_path", path: exact(`/svc/M${i}`) } : header({ name: `x-h${i}`, value: "1" }),
      ]),
    );
    const engine = compileRbac(deny(...policies)) as unknown as {
      always: unknown[];
      byPath: Map<string, unknown[]>;
      byHeader: Map<string, unknown[]>;
    };
    expect(engine.always).toHaveLength(0);
    expect(engine.byPath.size).toBe(50);
    expect(engine.byHeader.size).toBe(50);
    expect(decide(deny(...policies), request({ path: "/svc/M42" }))).toMatchObject({ allowed: false, policy: "p42" });
    expect(decide(deny(...policies), request({ headers: { "x-h7": "1" } }))).toMatchObject({
      allowed: false,
      policy: "p7",
    });
    expect(decide(deny(...policies), request({ headers: { "x-h7": "2" } }))).toEqual({ allowed: true });
    const prefixes = Array.from({ length: 100 }, (_, i) =>
      policy(`s${i}`, [{ type: "url_path", path: { type: "prefix", value: `/svc${i}/`, ignoreCase: false } }]),
    );
    const byPrefix = (
      compileRbac(allow(...prefixes)) as unknown as { byPrefix: { length: number; policies: Map<string, unknown> }[] }
    ).byPrefix;
    expect(byPrefix.map((b) => [b.length, b.policies.size])).toEqual([
      [6, 10],
      [7, 90],
    ]);
    expect(decide(allow(...prefixes), request({ path: "/svc42/Get" }))).toEqual({ allowed: true, policy: "s42" });
    expect(decide(allow(...prefixes), request({ path: "/svc4/Get" }))).toEqual({ allowed: true, policy: "s4" });
    expect(decide(allow(...prefixes), request({ path: "/svc/Get" })).allowed).toBe(false);
  });

  it("keys suffix matchers by suffix and runs contains and case-insensitive ones in one pass, naming the first match", () => {
    const policies = [
      ...Array.from({ length: 50 }, (_, i) =>
        policy(`a${String(i).padStart(2, "0")}`, [
          { type: "url_path", path: { type: "suffix", value: `/Get${i}`, ignoreCase: false } },
        ]),
      ),
      ...Array.from({ length: 50 }, (_, i) =>
        policy(`b${String(i).padStart(2, "0")}`, [
          {
            type: "url_path",
            path: { type: i % 2 === 0 ? "contains" : "prefix", value: `/SVC${i}`, ignoreCase: i % 2 === 1 },
          },
        ]),
      ),
    ];
    const engine = compileRbac(allow(...policies)) as unknown as {
      always: unknown[];
      bySuffix: { length: number; policies: Map<string, unknown> }[];
      gated: unknown[];
    };
    expect(engine.always).toHaveLength(0);
    expect(engine.bySuffix.map((b) => [b.length, b.policies.size])).toEqual([
      [5, 10],
      [6, 40],
    ]);
    expect(engine.gated).toHaveLength(50);
    // Both a suffix policy and a contains policy match: the first in name order is named.
    expect(decide(allow(...policies), request({ path: "/x/SVC4/Get7" }))).toEqual({ allowed: true, policy: "a07" });
    expect(decide(allow(...policies), request({ path: "/x/SVC4/Put" }))).toEqual({ allowed: true, policy: "b04" });
    expect(decide(allow(...policies), request({ path: "/svc5/Put" }))).toEqual({ allowed: true, policy: "b05" });
    expect(decide(allow(...policies), request({ path: "/svc4/Put" })).allowed).toBe(false);
  });

  it("runs path tests one by one when they are too many to compile into one pass, and decides the same", () => {
    // One text of 2,100 distinct characters: 2,101 states by 2,101 character classes is past the table's limit.
    const long = Array.from({ length: 2100 }, (_, i) => String.fromCharCode(0x4e00 + i)).join("");
    const policies = [
      policy("long", [{ type: "url_path", path: { type: "contains", value: long, ignoreCase: false } }]),
      policy("short", [{ type: "url_path", path: { type: "contains", value: "/Get", ignoreCase: false } }]),
    ];
    const engine = compileRbac(allow(...policies)) as unknown as { always: unknown[]; gated: unknown[] };
    expect(engine.gated).toHaveLength(0);
    expect(engine.always).toHaveLength(2);
    expect(decide(allow(...policies), request({ path: `/x${long}/Get` }))).toEqual({ allowed: true, policy: "long" });
    expect(decide(allow(...policies), request({ path: "/x/Get" }))).toEqual({ allowed: true, policy: "short" });
    expect(decide(allow(...policies), request({ path: "/x/Put" })).allowed).toBe(false);
  });
});

// ---- The plain evaluator: every policy, every rule, read straight from the request. ----

function plainHeader(req: RbacRequest, rawName: string): string | undefined {
  const name = rawName.toLowerCase();
  const read = (n: string) => {
    const v = req.headers[n];
    if (v === undefined) return undefined;
    if (typeof v === "string") return v;
    return v.length === 0 ? undefined : v.join(",");
  };
  if (name === ":path") return req.path;
  if (name === ":method") return read(":method") ?? "POST";
  if (name === "te") return undefined;
  if (name === "host" || name === ":authority") return read(":authority") ?? read("host");
  return read(name);
}

function plainString(m: StringMatcher, value: string): boolean {
  if (m.type === "safe_regex") return new RegExp(`^(?:${m.regex})$`).test(value);
  const v = m.ignoreCase ? value.toLowerCase() : value;
  const want = m.ignoreCase ? m.value.toLowerCase() : m.value;
  if (m.type === "exact") return v === want;
  if (m.type === "prefix") return v.startsWith(want);
  if (m.type === "suffix") return v.endsWith(want);
  return v.includes(want);
}

function plainHeaderMatch(h: HeaderMatcher, value: string | undefined): boolean {
  if (h.type === "present") return ((value !== undefined) === h.present) !== h.invert;
  if (value === undefined) return false;
  let result: boolean;
  if (h.type === "range") result = /^[+-]?\d+$/.test(value) && BigInt(value) >= h.start && BigInt(value) < h.end;
  else if (h.type === "safe_regex") result = new RegExp(`^(?:${h.regex})$`).test(value);
  else result = plainString({ type: h.type, value: h.value, ignoreCase: h.ignoreCase }, value);
  return result !== h.invert;
}

function plainInRange(ip: string, range: { family: 4 | 6; address: string; prefixLen: number }): boolean {
  const address = ip.startsWith("::ffff:") && ip.includes(".") ? ip.slice(7) : ip;
  const fam = isIPv6(address) ? 6 : 4;
  if (fam !== range.family) return false;
  const list = new BlockList();
  list.addSubnet(range.address, range.prefixLen, fam === 4 ? "ipv4" : "ipv6");
  return list.check(address, fam === 4 ? "ipv4" : "ipv6");
}

function plainRule(rule: RbacRule, req: RbacRequest): boolean {
  switch (rule.type) {
    case "any":
      return true;
    case "and":
      return rule.rules.every((r) => plainRule(r, req));
    case "or":
      return rule.rules.some((r) => plainRule(r, req));
    case "not":
      return !plainRule(rule.rule, req);
    case "header":
      return plainHeaderMatch(rule.header, plainHeader(req, rule.header.name));
    case "url_path":
      return plainString(rule.path, req.path);
    case "destination_ip":
      return plainInRange(req.local.ip, rule.range);
    case "source_ip":
      return plainInRange(req.peer.ip, rule.range);
    case "destination_port":
      return req.local.port >= rule.start && req.local.port < rule.end;
    case "requested_server_name":
      return rule.matches;
    case "metadata":
      return rule.invert;
    case "authenticated": {
      const names = req.peer.principalNames;
      if (names === undefined) return false;
      const matcher = rule.principalName;
      return matcher === undefined || names.some((n) => plainString(matcher, n));
    }
  }
}

function plainMatches(config: RbacFilterConfig, req: RbacRequest): string[] {
  return (config.rules?.policies ?? [])
    .filter((p) => p.permissions.some((r) => plainRule(r, req)) && p.principals.some((r) => plainRule(r, req)))
    .map((p) => p.name);
}

// ---- Arbitraries over a small vocabulary, so rules and calls meet often. ----

const HEADER_NAMES = ["x-a", "x-b", "host", ":authority", ":method", ":path", "te", "content-type", "X-A"];
const VALUES = [
  "",
  "v",
  "v1",
  "V1",
  "/svc/A",
  "/svc/B",
  "/svc/",
  "/",
  "/SVC",
  "A",
  "/A",
  "c/A",
  "POST",
  "GET",
  "12",
  "application/grpc",
];
const PATHS = ["/svc/A", "/svc/B", "/other/C", "/SVC/A"];
const IPS = ["10.0.0.1", "10.1.2.3", "192.168.0.9", "::1", "2001:db8::7", "::ffff:10.1.2.3", "127.0.0.1"];
const RANGES = [
  { family: 4 as const, address: "10.0.0.0", prefixLen: 8 },
  { family: 4 as const, address: "10.1.2.3", prefixLen: 32 },
  { family: 4 as const, address: "0.0.0.0", prefixLen: 0 },
  { family: 6 as const, address: "2001:db8::", prefixLen: 32 },
  { family: 6 as const, address: "::", prefixLen: 0 },
];

const stringMatcher: fc.Arbitrary<StringMatcher> = fc.oneof(
  fc.record({
    type: fc.constantFrom("exact" as const, "prefix" as const, "suffix" as const, "contains" as const),
    value: fc.constantFrom(...VALUES),
    ignoreCase: fc.boolean(),
  }),
  fc.record({
    type: fc.constant("safe_regex" as const),
    regex: fc.constantFrom("v.*", "/svc/.*", "[0-9]+", ".*A"),
    ignoreCase: fc.constant(false as const),
  }),
);

const headerMatcher: fc.Arbitrary<HeaderMatcher> = fc
  .tuple(
    fc.constantFrom(...HEADER_NAMES),
    fc.boolean(),
    fc.oneof(
      stringMatcher.map((m) => (m.type === "safe_regex" ? { type: m.type, regex: m.regex } : m)),
      fc.record({ type: fc.constant("present" as const), present: fc.boolean() }),
      fc.record({
        type: fc.constant("range" as const),
        start: fc.constantFrom(0n, 10n),
        end: fc.constantFrom(10n, 13n, 100n),
      }),
    ),
  )
  .map(([name, invert, spec]) => ({ name, invert, ...spec }) as HeaderMatcher);

// Weighted towards the rules the index keys on (exact paths, headers), so calls often meet policies that differ in
// their requirements.
const leaf: fc.Arbitrary<RbacRule> = fc.oneof(
  { arbitrary: fc.constant<RbacRule>({ type: "any" }), weight: 1 },
  { arbitrary: headerMatcher.map((h): RbacRule => ({ type: "header", header: h })), weight: 4 },
  { arbitrary: stringMatcher.map((m): RbacRule => ({ type: "url_path", path: m })), weight: 3 },
  { arbitrary: fc.constantFrom(...PATHS).map((p): RbacRule => ({ type: "url_path", path: exact(p) })), weight: 4 },
  { arbitrary: fc.constantFrom(...RANGES).map((range): RbacRule => ({ type: "destination_ip", range })), weight: 1 },
  { arbitrary: fc.constantFrom(...RANGES).map((range): RbacRule => ({ type: "source_ip", range })), weight: 1 },
  {
    arbitrary: fc
      .record({ start: fc.constantFrom(80, 8080), end: fc.constantFrom(81, 8081, 9000) })
      .map((r): RbacRule => ({ type: "destination_port", ...r })),
    weight: 1,
  },
  { arbitrary: fc.boolean().map((matches): RbacRule => ({ type: "requested_server_name", matches })), weight: 1 },
  { arbitrary: fc.boolean().map((invert): RbacRule => ({ type: "metadata", invert })), weight: 1 },
  {
    arbitrary: fc
      .option(stringMatcher, { nil: undefined })
      .map(
        (m): RbacRule => (m === undefined ? { type: "authenticated" } : { type: "authenticated", principalName: m }),
      ),
    weight: 1,
  },
);

const rule: fc.Arbitrary<RbacRule> = fc.letrec<{ rule: RbacRule }>((tie) => ({
  rule: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({ type: fc.constantFrom("and" as const, "or" as const), rules: fc.array(tie("rule"), { maxLength: 3 }) }),
    tie("rule").map((r): RbacRule => ({ type: "not", rule: r })),
  ),
})).rule;

const config: fc.Arbitrary<RbacFilterConfig> = fc
  .record({
    action: fc.constantFrom("ALLOW" as const, "DENY" as const),
    policies: fc.uniqueArray(
      fc.record({
        name: fc.string({ minLength: 1, maxLength: 4 }),
        permissions: fc.array(fc.oneof(leaf, rule), { maxLength: 3 }),
        principals: fc.array(fc.oneof(leaf, rule), { maxLength: 2 }),
      }),
      { maxLength: 6, selector: (p) => p.name },
    ),
  })
  .map((rules) => ({ rules }));

const call: fc.Arbitrary<RbacRequest> = fc.record({
  path: fc.constantFrom(...PATHS),
  headers: fc.dictionary(
    fc.constantFrom(...HEADER_NAMES.map((n) => n.toLowerCase()), "x-c"),
    fc.oneof(fc.constantFrom(...VALUES), fc.array(fc.constantFrom(...VALUES), { maxLength: 3 })),
    { maxKeys: 5 },
  ),
  peer: fc.record({
    ip: fc.constantFrom(...IPS),
    port: fc.constantFrom(1, 50000),
    principalNames: fc.option(fc.constantFrom([""], ["v1"], ["/svc/A", "v"], ["GET"]), { nil: undefined }),
  }),
  local: fc.record({ ip: fc.constantFrom(...IPS), port: fc.constantFrom(80, 8080) }),
});

describe("the compiled engine against a plain evaluator", () => {
  it("decides as evaluating every policy in order does, and names the first policy that matches", () => {
    fc.assert(
      fc.property(config, fc.array(call, { minLength: 1, maxLength: 5 }), (cfg, calls) => {
        const compiled = compileRbac(cfg);
        for (const req of calls) {
          const matched = plainMatches(cfg, req);
          const decision = evaluateRbac(compiled, req);
          const action = cfg.rules?.action;
          expect(decision.allowed).toBe(action === "ALLOW" ? matched.length > 0 : matched.length === 0);
          // A41: the first policy (in name order) that matches is the one named.
          expect(decision.policy).toBe(matched[0]);
        }
      }),
      { numRuns: 500 },
    );
  });
});
