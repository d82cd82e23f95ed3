// The server's route table as a pure function of a route configuration and a call (no sockets): the virtual host
// by authority, the first matching route, the path, header and runtime-fraction matches as gRPC reads them, the
// route's action, and which HTTP filter config each call runs (A39: route over virtual host over Listener).
import { Code } from "@connectrpc/connect";
import type {
  FilterConfigOverrides,
  HeaderMatcher,
  Route,
  RouteMatch,
  ServerHttpFilter,
  ServerHttpFilterConfig,
  VirtualHost,
} from "@xdskit/xds-client";
import { describe, expect, it } from "vitest";
import { compileRouteMatch, findVirtualHost, type RequestHeaders } from "../src/routing/route-match.js";
import { compileRouteTable } from "../src/routing/route-table.js";
import type { CallView, ServerFilterFactory, ServerFilterRegistry } from "../src/routing/server-filters.js";

const NONE: FilterConfigOverrides = {};

function route(name: string, match: Partial<RouteMatch> = {}, extra: Partial<Route> = {}): Route {
  return {
    name,
    match: { path: { type: "prefix", value: "", caseSensitive: true }, headers: [], ...match },
    action: { type: "non_forwarding" },
    typedPerFilterConfig: NONE,
    ...extra,
  };
}

function vhost(name: string, domains: string[], routes: Route[], typedPerFilterConfig = NONE): VirtualHost {
  return { name, domains, routes, typedPerFilterConfig };
}

function call(path: string, headers: RequestHeaders = {}): CallView {
  return {
    path,
    headers,
    peer: { ip: "127.0.0.1", port: 1000, principalNames: undefined },
    local: { ip: "127.0.0.1", port: 2000 },
  };
}

const never = () => 0.5;

describe("virtual host choice", () => {
  const hosts = (...domains: string[][]) => domains.map((d) => ({ domains: d }));
  it("takes an exact domain, then the longest suffix, then the longest prefix, then *", () => {
    const table = hosts(["*"], ["foo.*"], ["*.example.com"], ["api.example.com"], ["*.com"], ["foo.ex*"]);
    expect(findVirtualHost("api.example.com", table)).toBe(3);
    expect(findVirtualHost("www.example.com", table)).toBe(2);
    expect(findVirtualHost("other.com", table)).toBe(4);
    expect(findVirtualHost("foo.example.org", table)).toBe(5);
    expect(findVirtualHost("foo.bar", table)).toBe(1);
    expect(findVirtualHost("anything", table)).toBe(0);
  });
  it("compares case-insensitively, the first virtual host winning a tie, -1 without a match", () => {
    expect(findVirtualHost("API.Example.COM", hosts(["x"], ["api.example.com"], ["API.EXAMPLE.COM"]))).toBe(1);
    expect(findVirtualHost("nothing", hosts(["a"], ["b*"]))).toBe(-1);
  });
});

describe("route matching", () => {
  const matches = (match: Partial<RouteMatch>, path: string, headers: RequestHeaders = {}, random = never) =>
    compileRouteMatch({ path: { type: "prefix", value: "", caseSensitive: true }, headers: [], ...match }, random)(
      path,
      headers,
    );
  const header = (matcher: Partial<HeaderMatcher> & { type: HeaderMatcher["type"] }): Partial<RouteMatch> => ({
    headers: [{ name: "x-h", invert: false, ...matcher } as HeaderMatcher],
  });

  it("matches paths by prefix and exactly, case-insensitively when asked", () => {
    expect(matches({ path: { type: "prefix", value: "/pkg.Svc/", caseSensitive: true } }, "/pkg.Svc/M")).toBe(true);
    expect(matches({ path: { type: "prefix", value: "/pkg.svc/", caseSensitive: true } }, "/pkg.Svc/M")).toBe(false);
    expect(matches({ path: { type: "prefix", value: "/PKG.svc/", caseSensitive: false } }, "/pkg.Svc/M")).toBe(true);
    expect(matches({ path: { type: "path", value: "/pkg.Svc/M", caseSensitive: true } }, "/pkg.Svc/M")).toBe(true);
    expect(matches({ path: { type: "path", value: "/pkg.Svc/M", caseSensitive: true } }, "/pkg.Svc/MM")).toBe(false);
    expect(matches({ path: { type: "path", value: "/PKG.SVC/m", caseSensitive: false } }, "/pkg.Svc/M")).toBe(true);
  });

  it("matches a safe_regex path as a full match, case-insensitively when case_sensitive is false (as the client)", () => {
    const regex = (caseSensitive: boolean) => ({
      path: { type: "safe_regex" as const, regex: "/pkg\\.Svc/(Get|Put)", caseSensitive },
    });
    expect(matches(regex(true), "/pkg.Svc/Get")).toBe(true);
    expect(matches(regex(true), "/pkg.Svc/GetMore")).toBe(false);
    expect(matches(regex(true), "x/pkg.Svc/Get")).toBe(false);
    expect(matches(regex(true), "/pkg.svc/get")).toBe(false);
    expect(matches(regex(false), "/pkg.svc/get")).toBe(true);
    expect(matches(regex(false), "/PKG.SVC/PUT")).toBe(true);
    expect(matches(regex(false), "/pkg.svc/getmore")).toBe(false);
  });

  it("never matches an absent header with a value matcher, inverted or not; present and its inverse see absence", () => {
    expect(matches(header({ type: "exact", value: "a", ignoreCase: false }), "/p")).toBe(false);
    expect(matches(header({ type: "exact", value: "a", ignoreCase: false, invert: true }), "/p")).toBe(false);
    expect(matches(header({ type: "exact", value: "a", ignoreCase: false, invert: true }), "/p", { "x-h": "b" })).toBe(
      true,
    );
    expect(matches(header({ type: "present", present: false }), "/p")).toBe(true);
    expect(matches(header({ type: "present", present: true, invert: true }), "/p")).toBe(true);
    expect(matches(header({ type: "present", present: true }), "/p", { "x-h": "" })).toBe(true);
  });

  it("reads headers as gRPC does: repeated values joined with a comma, -bin never present, content-type as gRPC", () => {
    expect(matches(header({ type: "exact", value: "a,b", ignoreCase: false }), "/p", { "x-h": ["a", "b"] })).toBe(true);
    expect(
      matches({ headers: [{ name: "x-h-bin", invert: false, type: "present", present: true }] }, "/p", {
        "x-h-bin": "AAAA",
      }),
    ).toBe(false);
    expect(
      matches(
        {
          headers: [
            { name: "content-type", invert: false, type: "exact", value: "application/grpc", ignoreCase: false },
          ],
        },
        "/p",
        { "content-type": "application/connect+proto" },
      ),
    ).toBe(true);
  });

  it("matches ranges over int64 values, regexes in full, and string matchers with ignore_case", () => {
    const range = header({ type: "range", start: -5n, end: 10n });
    expect(matches(range, "/p", { "x-h": "-5" })).toBe(true);
    expect(matches(range, "/p", { "x-h": "10" })).toBe(false);
    expect(matches(range, "/p", { "x-h": "1.5" })).toBe(false);
    expect(matches(range, "/p", { "x-h": "99999999999999999999" })).toBe(false);
    const regex = header({ type: "safe_regex", regex: "v[0-9]+" });
    expect(matches(regex, "/p", { "x-h": "v12" })).toBe(true);
    expect(matches(regex, "/p", { "x-h": "v12x" })).toBe(false);
    expect(matches(header({ type: "suffix", value: "END", ignoreCase: true }), "/p", { "x-h": "the end" })).toBe(true);
    expect(matches(header({ type: "contains", value: "mid", ignoreCase: false }), "/p", { "x-h": "aMIDb" })).toBe(
      false,
    );
  });

  it("matches a runtime fraction when the draw per million is below it", () => {
    const fraction = { fractionPerMillion: 250_000 };
    expect(matches(fraction, "/p", {}, () => 0.249_999)).toBe(true);
    expect(matches(fraction, "/p", {}, () => 0.25)).toBe(false);
    expect(matches({ fractionPerMillion: 0 }, "/p", {}, () => 0)).toBe(false);
  });
});

describe("route table", () => {
  /** A filter type whose config names the decision: `{ type: "rbac", deny: "label" }` denies with that label. */
  const marking: ServerFilterFactory = (config) => {
    const label = (config as unknown as { deny?: string }).deny;
    return label === undefined ? undefined : () => ({ code: Code.PermissionDenied, message: label });
  };
  const registry: ServerFilterRegistry = new Map<ServerHttpFilterConfig["type"], ServerFilterFactory>([
    ["router", () => undefined],
    ["rbac", marking],
  ]);
  const filter = (deny?: string, disabled = false): ServerHttpFilter => ({
    name: "rbac",
    config: { typeUrl: "", value: new Uint8Array() } as never,
    isOptional: false,
    disabled,
    filter: { type: "rbac", ...(deny === undefined ? {} : { deny }) } as never,
  });
  const override = (deny?: string): FilterConfigOverrides => ({
    rbac: {
      config: {} as never,
      isOptional: false,
      disabled: false,
      parsed: { type: "rbac", ...(deny === undefined ? {} : { deny }) } as never,
    },
  });
  const router: ServerHttpFilter = {
    name: "router",
    config: {} as never,
    isOptional: false,
    disabled: false,
    filter: { type: "router" },
  };
  const disabledOverride: FilterConfigOverrides = { rbac: { config: {} as never, isOptional: false, disabled: true } };

  it("turns a filter off where a disabled override names it, and on where an override enables a disabled one", () => {
    const routes = (listenerDeny: string, disabledInListener: boolean) =>
      compileRouteTable({
        routes: {
          virtualHosts: [
            vhost(
              "vh",
              ["*"],
              [
                route(
                  "off",
                  { path: { type: "path", value: "/off", caseSensitive: true } },
                  {
                    typedPerFilterConfig: disabledOverride,
                  },
                ),
                route(
                  "own",
                  { path: { type: "path", value: "/own", caseSensitive: true } },
                  {
                    typedPerFilterConfig: override("route"),
                  },
                ),
                route("inherits", { path: { type: "prefix", value: "/", caseSensitive: true } }),
              ],
            ),
          ],
        },
        httpFilters: [filter(listenerDeny, disabledInListener), router],
        registry,
        nodeId: "node",
        random: never,
      });
    const enabled = routes("listener", false);
    expect(enabled.decide(call("/off"), "host")).toBeUndefined();
    expect(enabled.decide(call("/own"), "host")).toEqual({ code: Code.PermissionDenied, message: "route" });
    expect(enabled.decide(call("/x"), "host")).toEqual({ code: Code.PermissionDenied, message: "listener" });
    const disabled = routes("listener", true);
    expect(disabled.decide(call("/off"), "host")).toBeUndefined();
    expect(disabled.decide(call("/own"), "host")).toEqual({ code: Code.PermissionDenied, message: "route" });
    expect(disabled.decide(call("/x"), "host")).toBeUndefined();
  });

  it("runs the first matching route's filters with the route's override, else the virtual host's, else the Listener's", () => {
    const table = compileRouteTable({
      routes: {
        virtualHosts: [
          vhost(
            "vh",
            ["*"],
            [
              route(
                "own",
                { path: { type: "path", value: "/own", caseSensitive: true } },
                { typedPerFilterConfig: override() },
              ),
              route("inherits", { path: { type: "path", value: "/inherits", caseSensitive: true } }),
              route(
                "later",
                { path: { type: "path", value: "/own", caseSensitive: true } },
                { typedPerFilterConfig: override("later") },
              ),
            ],
            override("vhost"),
          ),
          vhost("plain", ["plain.example"], [route("all")]),
        ],
      },
      httpFilters: [filter("listener"), router],
      registry,
      nodeId: "node",
      random: never,
    });
    expect(table.decide(call("/own"), "host")).toBeUndefined();
    expect(table.decide(call("/inherits"), "host")).toEqual({ code: Code.PermissionDenied, message: "vhost" });
    expect(table.decide(call("/any"), "plain.example")).toEqual({ code: Code.PermissionDenied, message: "listener" });
  });

  it("fails UNAVAILABLE a call that matches a forwarding route, no route or no virtual host, naming the node", () => {
    const table = compileRouteTable({
      routes: {
        virtualHosts: [
          vhost(
            "vh",
            ["only.example"],
            [
              route(
                "fwd",
                { path: { type: "prefix", value: "/fwd", caseSensitive: true } },
                {
                  action: { type: "cluster", cluster: "c" } as never,
                },
              ),
              route("ok", { path: { type: "prefix", value: "/ok", caseSensitive: true } }),
            ],
          ),
        ],
      },
      httpFilters: [router],
      registry,
      nodeId: "node-1",
      random: never,
    });
    expect(table.forwardingRoutes).toEqual(["vh/fwd"]);
    expect(table.decide(call("/ok/M"), "only.example")).toBeUndefined();
    expect(table.decide(call("/fwd/M"), "only.example")).toEqual({
      code: Code.Unavailable,
      message: `the call matched route vh/fwd, whose action is not non_forwarding_action (xDS node ID "node-1")`,
    });
    expect(table.decide(call("/other"), "only.example")).toEqual({
      code: Code.Unavailable,
      message: `the call matched no route of virtual host vh (xDS node ID "node-1")`,
    });
    expect(table.decide(call("/ok/M"), "elsewhere")).toEqual({
      code: Code.Unavailable,
      message: `the call's authority matched no virtual host (xDS node ID "node-1")`,
    });
  });

  it("fails a routing error UNAVAILABLE before any filter runs, as grpc-go and C-core do", () => {
    const table = compileRouteTable({
      routes: {
        virtualHosts: [
          vhost(
            "vh",
            ["only.example"],
            [
              route(
                "fwd",
                { path: { type: "path", value: "/fwd", caseSensitive: true } },
                { action: { type: "unsupported" } },
              ),
            ],
          ),
        ],
      },
      httpFilters: [filter("denied"), router],
      registry,
      nodeId: "n",
      random: never,
    });
    expect(table.decide(call("/fwd"), "only.example")).toMatchObject({ code: Code.Unavailable });
    expect(table.decide(call("/other"), "only.example")).toMatchObject({ code: Code.Unavailable });
    expect(table.decide(call("/fwd"), "elsewhere")).toMatchObject({ code: Code.Unavailable });
  });
});
