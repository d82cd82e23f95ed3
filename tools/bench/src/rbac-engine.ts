// The RBAC engine (A41) per call with 100 policies: @xdskit/xds-client's compiled, indexed engine
// (compileRbac/evaluateRbac) beside @grpc/grpc-js-xds's (parseConfig(...).apply, from its build), the same policies and
// the same call in the same run. Goal (issue 32): at most 1 µs per call with 100 policies, and nothing for a policy
// whose headers the call lacks.
import { createRequire } from "node:module";
import { Metadata } from "@grpc/grpc-js";
import { compileRbac, evaluateRbac, type RbacFilterConfig, type RbacRequest, type RbacRule } from "@xdskit/xds-client";
import { consume, opsPerSecond } from "./lib/measure.js";
import { printTable, ratio } from "./lib/table.js";

const require = createRequire(import.meta.url);
require("@grpc/grpc-js-xds");
const peer = require("@grpc/grpc-js-xds/build/src/rbac") as {
  parseConfig(rbac: unknown): { apply(info: unknown): boolean };
};

const POLICIES = 100;
const quick = process.argv.includes("--quick");

/** One scenario: the same rules for both engines, and one call each engine reads in its own form. */
interface Scenario {
  readonly name: string;
  readonly ours: RbacFilterConfig;
  /** grpc-js-xds's `RBAC__Output` (proto-loader's shape). */
  readonly theirs: unknown;
  readonly headers: Record<string, string>;
  readonly path: string;
  readonly principal: string | undefined;
}

const any: RbacRule = { type: "any" };
const anyTheirs = { identifier: "any", any: true };
const exact = (value: string) => ({ type: "exact" as const, value, ignoreCase: false });

/** 100 DENY policies, each on a header of its own (`x-deny-<i>: yes`). */
function headerPolicies(): Pick<Scenario, "ours" | "theirs"> {
  const ours: RbacFilterConfig = {
    rules: {
      action: "DENY",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `deny-${i}`,
        permissions: [
          {
            type: "header",
            header: { name: `x-deny-${i}`, invert: false, type: "exact", value: "yes", ignoreCase: false },
          },
        ],
        principals: [any],
      })),
    },
  };
  const policies: Record<string, unknown> = {};
  for (let i = 0; i < POLICIES; i++) {
    policies[`deny-${i}`] = {
      permissions: [
        {
          rule: "header",
          header: {
            name: `x-deny-${i}`,
            header_match_specifier: "exact_match",
            exact_match: "yes",
            invert_match: false,
          },
        },
      ],
      principals: [anyTheirs],
    };
  }
  return { ours, theirs: { action: "DENY", policies } };
}

/** 100 ALLOW policies, each a method (exact path) for SPIFFE IDs of one namespace. */
function methodPolicies(): Pick<Scenario, "ours" | "theirs"> {
  const ours: RbacFilterConfig = {
    rules: {
      action: "ALLOW",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `method-${i}`,
        permissions: [{ type: "url_path", path: exact(`/pkg.Svc/Method${i}`) }],
        principals: [
          { type: "authenticated", principalName: { type: "prefix", value: "spiffe://mesh/ns/a/", ignoreCase: false } },
        ],
      })),
    },
  };
  const policies: Record<string, unknown> = {};
  for (let i = 0; i < POLICIES; i++) {
    policies[`method-${i}`] = {
      permissions: [
        {
          rule: "url_path",
          url_path: { path: { match_pattern: "exact", exact: `/pkg.Svc/Method${i}`, ignore_case: false } },
        },
      ],
      principals: [
        {
          identifier: "authenticated",
          authenticated: {
            principal_name: { match_pattern: "prefix", prefix: "spiffe://mesh/ns/a/", ignore_case: false },
          },
        },
      ],
    };
  }
  return { ours, theirs: { action: "ALLOW", policies } };
}

/** 100 ALLOW policies on a path matcher and a source range each: `prefix` or `suffix` (both indexed). */
function rangePolicies(kind: "prefix" | "suffix"): Pick<Scenario, "ours" | "theirs"> {
  const value = (i: number) => (kind === "prefix" ? `/pkg.Svc${i}/` : `/Method${i}`);
  const ours: RbacFilterConfig = {
    rules: {
      action: "ALLOW",
      policies: Array.from({ length: POLICIES }, (_, i) => ({
        name: `${kind}-${i}`,
        permissions: [{ type: "url_path", path: { type: kind, value: value(i), ignoreCase: false } }],
        principals: [{ type: "source_ip", range: { family: 4, address: `10.${i}.0.0`, prefixLen: 16 } }],
      })),
    },
  };
  const policies: Record<string, unknown> = {};
  for (let i = 0; i < POLICIES; i++) {
    policies[`${kind}-${i}`] = {
      permissions: [
        { rule: "url_path", url_path: { path: { match_pattern: kind, [kind]: value(i), ignore_case: false } } },
      ],
      principals: [
        {
          identifier: "direct_remote_ip",
          direct_remote_ip: { address_prefix: `10.${i}.0.0`, prefix_len: { value: 16 } },
        },
      ],
    };
  }
  return { ours, theirs: { action: "ALLOW", policies } };
}

const baseHeaders = {
  ":authority": "svc.mesh",
  ":method": "POST",
  "content-type": "application/grpc",
  "x-request-id": "abc",
  "user-agent": "bench",
};

const scenarios: Scenario[] = [
  {
    name: "100 header DENY policies, call has none of their headers",
    ...headerPolicies(),
    headers: baseHeaders,
    path: "/pkg.Svc/Get",
    principal: undefined,
  },
  {
    name: "100 header DENY policies, call matches the last",
    ...headerPolicies(),
    headers: { ...baseHeaders, [`x-deny-${POLICIES - 1}`]: "yes" },
    path: "/pkg.Svc/Get",
    principal: undefined,
  },
  {
    name: "100 method ALLOW policies (mTLS), call is the last method",
    ...methodPolicies(),
    headers: baseHeaders,
    path: `/pkg.Svc/Method${POLICIES - 1}`,
    principal: "spiffe://mesh/ns/a/sa/client",
  },
  {
    name: "100 path-prefix + range ALLOW policies, call matches the last",
    ...rangePolicies("prefix"),
    headers: baseHeaders,
    path: `/pkg.Svc${POLICIES - 1}/Get`,
    principal: undefined,
  },
  {
    name: "100 path-suffix + range ALLOW policies (suffix index), call matches the last",
    ...rangePolicies("suffix"),
    headers: baseHeaders,
    path: `/pkg.Svc/Method${POLICIES - 1}`,
    principal: undefined,
  },
];

const rows: string[][] = [];
for (const scenario of scenarios) {
  const source = scenario.name.includes("range") ? `10.${POLICIES - 1}.3.4` : "10.0.0.7";
  const ourRequest: RbacRequest = {
    path: scenario.path,
    headers: scenario.headers,
    peer: {
      ip: source,
      port: 40000,
      principalNames: scenario.principal === undefined ? undefined : [scenario.principal],
    },
    local: { ip: "10.1.0.1", port: 50051 },
  };
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(scenario.headers)) if (!name.startsWith(":")) metadata.set(name, value);
  const theirInfo = {
    headers: metadata,
    urlPath: scenario.path,
    destinationIp: "10.1.0.1",
    destinationPort: 50051,
    tls: scenario.principal !== undefined,
    peerCertificate:
      scenario.principal === undefined ? null : { subjectaltname: `URI:${scenario.principal}`, subject: {} },
    sourceIp: source,
  };
  const compiled = compileRbac(scenario.ours);
  const group = peer.parseConfig(scenario.theirs);
  // Both engines must decide the same, or the comparison means nothing.
  const ourAnswer = evaluateRbac(compiled, ourRequest).allowed;
  const theirAnswer = group.apply(theirInfo);
  if (ourAnswer !== theirAnswer)
    throw new Error(`${scenario.name}: xdskit says ${ourAnswer}, grpc-js-xds ${theirAnswer}`);
  const options = quick ? { sampleMs: 50, samples: 3 } : {};
  const ours = opsPerSecond(() => consume(evaluateRbac(compiled, ourRequest)), options);
  const theirs = opsPerSecond(() => consume(group.apply(theirInfo)), options);
  rows.push([
    scenario.name,
    (1e9 / ours).toFixed(0),
    (1e9 / theirs).toFixed(0),
    ratio(ours / theirs),
    ourAnswer ? "allow" : "deny",
  ]);
}

printTable(
  `RBAC per call, ${POLICIES} policies (ns per call; ratio: xdskit calls per second / grpc-js-xds's)`,
  ["scenario", "xdskit ns", "grpc-js-xds ns", "ratio", "decision"],
  rows,
);
