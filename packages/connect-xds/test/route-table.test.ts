// The route table's per-path candidate cache against matching every route in turn: on random virtual hosts and
// random call sequences (paths repeat, so the cache is used), with the same random draws, both choose the same
// route and cluster, or fail with the same error.
import { Code } from "@connectrpc/connect";
import type { FilterConfigOverride, HttpFilter, Route, RouteAction, VirtualHost } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRouteTable, MAX_CACHED_PATHS } from "../src/internal.js";
import { headerList, routeMatch } from "./support/route-arbitraries.js";

const forwarding = { hashPolicies: [], autoHostRewrite: false };

const action: fc.Arbitrary<RouteAction> = fc.oneof(
  fc.constantFrom("c1", "c2", "c3").map((cluster) => ({ ...forwarding, type: "cluster" as const, cluster })),
  fc
    .array(fc.record({ name: fc.constantFrom("c1", "c2", "c3"), weight: fc.integer({ min: 1, max: 5 }) }), {
      minLength: 2,
      maxLength: 3,
    })
    .map((entries) => ({
      ...forwarding,
      type: "weighted_clusters" as const,
      weightedClusters: entries.map((e) => ({ ...e, typedPerFilterConfig: {} })),
      totalWeight: entries.reduce((sum, e) => sum + e.weight, 0),
    })),
  fc.constant({ type: "unsupported" as const }),
);

const virtualHost: fc.Arbitrary<VirtualHost> = fc
  .array(fc.record({ match: routeMatch, action }), { minLength: 1, maxLength: 8 })
  .map((routes) => ({
    name: "vh",
    domains: ["*"],
    typedPerFilterConfig: {},
    routes: routes.map((r, i): Route => ({ name: `r${i}`, ...r, typedPerFilterConfig: {} })),
  }));

const calls = fc.array(
  fc.record({
    path: fc.constantFrom("/a/b", "/A/b", "/aB", "1", "/a/", "", "/xdskit.test.Echo/Unary"),
    headers: headerList,
  }),
  { minLength: 1, maxLength: 20 },
);

/** The same sequence of draws for each table. */
function draws(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

function outcome(result: ReturnType<ReturnType<typeof createRouteTable>["select"]>): string {
  return result instanceof Error
    ? `error ${result.code} ${result.rawMessage}`
    : `${result.route.name} -> ${result.cluster}`;
}

describe("createRouteTable", () => {
  it("chooses with its per-path cache exactly what matching every route chooses", () => {
    fc.assert(
      fc.property(virtualHost, calls, fc.integer(), (vh, sequence, seed) => {
        const cached = createRouteTable({ virtualHost: vh, httpFilters: [], nodeId: "n", random: draws(seed) });
        const scanned = createRouteTable({
          virtualHost: vh,
          httpFilters: [],
          nodeId: "n",
          random: draws(seed),
          useCache: false,
        });
        for (const call of sequence) {
          const headers = new Headers();
          for (const [name, value] of call.headers) headers.append(name, value);
          expect(outcome(cached.select(call.path, headers))).toBe(outcome(scanned.select(call.path, headers)));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps matching correctly beyond the paths it caches", () => {
    const vh: VirtualHost = {
      name: "vh",
      domains: ["*"],
      typedPerFilterConfig: {},
      routes: [
        {
          name: "even",
          match: { path: { type: "safe_regex", regex: "/s/m[0-9]*[02468]", caseSensitive: true }, headers: [] },
          action: { ...forwarding, type: "cluster", cluster: "even" },
          typedPerFilterConfig: {},
        },
      ],
    };
    const table = createRouteTable({ virtualHost: vh, httpFilters: [], nodeId: "n", random: Math.random });
    const headers = new Headers();
    for (let i = 0; i < MAX_CACHED_PATHS + 50; i++) {
      const result = table.select(`/s/m${i}`, headers);
      if (i % 2 === 0) expect(outcome(result)).toBe("even -> even");
      else expect(result instanceof Error && result.code).toBe(Code.Unavailable);
    }
  });

  it("drops a filter a disabled override names, and runs a filter the Listener disabled where an override enables it", () => {
    const fault = (name: string, disabled: boolean): HttpFilter => ({
      name,
      config: { type: "envoy.extensions.filters.http.fault.v3.HTTPFault", kind: "json", value: {} },
      isOptional: false,
      disabled,
    });
    const entry = (disabled: boolean): FilterConfigOverride => ({
      config: { type: "envoy.config.route.v3.FilterConfig", kind: "json", value: {} },
      isOptional: false,
      disabled,
    });
    const route = (name: string, overrides: Record<string, FilterConfigOverride>): Route => ({
      name,
      match: { path: { type: "path", value: `/s/${name}`, caseSensitive: true }, headers: [] },
      action: { ...forwarding, type: "cluster", cluster: "c" },
      typedPerFilterConfig: overrides,
    });
    const vh: VirtualHost = {
      name: "vh",
      domains: ["*"],
      typedPerFilterConfig: { on: entry(true) },
      routes: [
        route("plain", {}),
        route("off", { on: entry(true) }),
        route("enabled", { off: entry(false), on: entry(false) }),
      ],
    };
    const table = createRouteTable({
      virtualHost: vh,
      httpFilters: [fault("on", false), fault("off", true)],
      nodeId: "n",
      random: Math.random,
    });
    const names = (path: string) => {
      const selection = table.select(path, new Headers());
      if (selection instanceof Error) throw selection;
      return selection.filters.map((f) => f.filter.name);
    };
    // "plain" inherits the virtual host's disabled entry for "on"; "off" stays off without an entry.
    expect(names("/s/plain")).toEqual([]);
    expect(names("/s/off")).toEqual([]);
    expect(names("/s/enabled")).toEqual(["on", "off"]);
  });
});
