import {
  FilterConfigSchema,
  type RouteActionSchema,
  type RouteMatchSchema,
  type RouteSchema,
  type VirtualHostSchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import { FractionalPercent_DenominatorType } from "@xdskit/protos/envoy/type/v3/percent_pb";
import { describe, expect, it } from "vitest";
import { type RouteConfigurationUpdate, routeConfigurationResourceType } from "../../src/resources/index.js";
import { contextWith, decodeWith, expectError, expectOk, type Init, isDeeplyFrozen, pack } from "./context.js";
import { typedStruct } from "./typed-struct.js";

type VhostInit = Init<typeof VirtualHostSchema>;
type RouteInit = Init<typeof RouteSchema>;
type MatchInit = Init<typeof RouteMatchSchema>;
type ActionInit = Init<typeof RouteActionSchema>;

const prefix = (value: string): MatchInit => ({ pathSpecifier: { case: "prefix", value } });
const toCluster = (cluster: string, extra: ActionInit = {}): NonNullable<RouteInit["action"]> => ({
  case: "route",
  value: { clusterSpecifier: { case: "cluster", value: cluster }, ...extra },
});
const route = (match: MatchInit, action: ActionInit = {}, extra: RouteInit = {}): RouteInit => ({
  match,
  action: toCluster("c", action),
  ...extra,
});

function decode(virtualHosts: VhostInit[], extra: Init<typeof RouteConfigurationSchema> = {}, ctx = contextWith()) {
  return decodeWith(
    routeConfigurationResourceType,
    RouteConfigurationSchema,
    { name: "rc", virtualHosts, ...extra },
    ctx,
  );
}

/** The routes of a single virtual host with domain `*`. */
function routesOf(routes: RouteInit[], extra: VhostInit = {}) {
  return expectOk(decode([{ domains: ["*"], routes, ...extra }])).virtualHosts[0]!.routes;
}

const FAULT = "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault";
const RLS_PLUGIN = "type.googleapis.com/grpc.lookup.v1.RouteLookupClusterSpecifier";
/** An Any of a type this package has no schema for (opaque payload). */
const opaque = (typeUrl: string) => ({ typeUrl, value: new Uint8Array([8, 1]) });

describe("routeConfigurationResourceType", () => {
  it("is RDS: not required in SotW, named RouteConfigurationResource", () => {
    expect(routeConfigurationResourceType.typeUrl).toBe("type.googleapis.com/envoy.config.route.v3.RouteConfiguration");
    expect(routeConfigurationResourceType.typeName).toBe("RouteConfigurationResource");
    expect(routeConfigurationResourceType.allResourcesRequiredInSotW).toBe(false);
  });

  it("decodes virtual hosts and routes into a frozen update with the raw message non-enumerable", () => {
    const update: RouteConfigurationUpdate = expectOk(
      decode([
        {
          name: "vh",
          domains: ["example.com", "*.example.com", "example.*", "*"],
          routes: [
            {
              name: "r0",
              match: {
                pathSpecifier: { case: "path", value: "/pkg.Service/Method" },
                caseSensitive: false,
                headers: [
                  { name: "x-a", headerMatchSpecifier: { case: "exactMatch", value: "1" }, invertMatch: true },
                  { name: "x-b", headerMatchSpecifier: { case: "rangeMatch", value: { start: 1n, end: 10n } } },
                  { name: "x-c", headerMatchSpecifier: { case: "presentMatch", value: true } },
                  {
                    name: "x-d",
                    headerMatchSpecifier: {
                      case: "stringMatch",
                      value: { matchPattern: { case: "suffix", value: "z" }, ignoreCase: true },
                    },
                  },
                  { name: "x-e", headerMatchSpecifier: { case: "safeRegexMatch", value: { regex: "a+b" } } },
                ],
                runtimeFraction: {
                  defaultValue: { numerator: 25, denominator: FractionalPercent_DenominatorType.HUNDRED },
                },
              },
              action: toCluster("cluster-a", {
                maxStreamDuration: { maxStreamDuration: { seconds: 5n }, grpcTimeoutHeaderMax: { seconds: 2n } },
                timeout: { seconds: 3n },
              }),
            },
          ],
        },
      ]),
    );
    expect(update).toEqual({
      name: "rc",
      virtualHosts: [
        {
          name: "vh",
          domains: ["example.com", "*.example.com", "example.*", "*"],
          typedPerFilterConfig: {},
          routes: [
            {
              name: "r0",
              match: {
                path: { type: "path", value: "/pkg.Service/Method", caseSensitive: false },
                headers: [
                  { name: "x-a", invert: true, type: "exact", value: "1", ignoreCase: false },
                  { name: "x-b", invert: false, type: "range", start: 1n, end: 10n },
                  { name: "x-c", invert: false, type: "present", present: true },
                  { name: "x-d", invert: false, type: "suffix", value: "z", ignoreCase: true },
                  { name: "x-e", invert: false, type: "safe_regex", regex: "a+b" },
                ],
                fractionPerMillion: 250000,
              },
              action: {
                type: "cluster",
                cluster: "cluster-a",
                hashPolicies: [],
                autoHostRewrite: false,
                maxStreamDurationMs: 2000,
                timeoutMs: 3000,
              },
              typedPerFilterConfig: {},
            },
          ],
        },
      ],
      clusterSpecifierPlugins: {},
    });
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.keys(update)).not.toContain("raw");
    expect(update.raw.virtualHosts[0]?.name).toBe("vh");
  });

  describe("path matching (A28)", () => {
    const cases: [string, MatchInit, unknown][] = [
      ["an empty prefix", prefix(""), { type: "prefix", value: "", caseSensitive: true }],
      ["a service prefix", prefix("/pkg.Service/"), { type: "prefix", value: "/pkg.Service/", caseSensitive: true }],
      [
        "a regex, case-insensitive",
        { pathSpecifier: { case: "safeRegex", value: { regex: "/pkg\\..*" } }, caseSensitive: false },
        { type: "safe_regex", regex: "/pkg\\..*", caseSensitive: false },
      ],
      [
        "a regex at RE2's repeat limits (1000, and nested counts multiplying to 1000)",
        { pathSpecifier: { case: "safeRegex", value: { regex: "/a{1000}/(b{10}){100}" } } },
        { type: "safe_regex", regex: "/a{1000}/(b{10}){100}", caseSensitive: true },
      ],
    ];
    it.each(cases)("%s", (_name, match, expected) => {
      expect(routesOf([route(match)])[0]?.match.path).toEqual(expected);
    });

    const ignored: [string, RouteInit][] = [
      ["a prefix without a leading slash", route(prefix("pkg"))],
      ["a prefix with more than two slashes", route(prefix("/a/b/c"))],
      ["a prefix starting with two slashes", route(prefix("//a"))],
      ["a path that is not /service/method", route({ pathSpecifier: { case: "path", value: "/a/b/c" } })],
      ["a path with an empty method", route({ pathSpecifier: { case: "path", value: "/svc/" } })],
      ["an empty path", route({ pathSpecifier: { case: "path", value: "" } })],
      ["query parameter matchers", route({ ...prefix(""), queryParameters: [{ name: "q" }] })],
      [
        "a cluster_header action",
        {
          match: prefix(""),
          action: { case: "route", value: { clusterSpecifier: { case: "clusterHeader", value: "x-cluster" } } },
        },
      ],
      ["a route action without cluster specifier", { match: prefix(""), action: { case: "route", value: {} } }],
    ];
    it.each(ignored)("ignores the route with %s, as gRPC does", (_name, ignoredRoute) => {
      const routes = routesOf([ignoredRoute, route(prefix("/kept/"))]);
      expect(routes.map((r) => r.match.path)).toEqual([{ type: "prefix", value: "/kept/", caseSensitive: true }]);
    });
  });

  describe("route actions", () => {
    it("weighted clusters skip zero weights and sum the rest", () => {
      const [r] = routesOf([
        {
          match: prefix(""),
          action: {
            case: "route",
            value: {
              clusterSpecifier: {
                case: "weightedClusters",
                value: {
                  clusters: [
                    { name: "a", weight: 30 },
                    { name: "zero", weight: 0 },
                    { name: "b", weight: 70, typedPerFilterConfig: { fault: opaque(FAULT) } },
                  ],
                },
              },
            },
          },
        },
      ]);
      expect(r?.action).toMatchObject({
        type: "weighted_clusters",
        totalWeight: 100,
        weightedClusters: [
          { name: "a", weight: 30, typedPerFilterConfig: {} },
          {
            name: "b",
            weight: 70,
            typedPerFilterConfig: {
              fault: {
                isOptional: false,
                disabled: false,
                config: { type: "envoy.extensions.filters.http.fault.v3.HTTPFault", kind: "bytes" },
              },
            },
          },
        ],
      });
    });

    it("non_forwarding and unsupported actions keep the route", () => {
      const routes = routesOf([
        { match: prefix("/a/"), action: { case: "nonForwardingAction", value: {} } },
        { match: prefix("/b/"), action: { case: "redirect", value: {} } },
        { match: prefix("/c/") },
      ]);
      expect(routes.map((r) => r.action)).toEqual([
        { type: "non_forwarding" },
        { type: "unsupported" },
        { type: "unsupported" },
      ]);
    });

    it("hash policies: headers (with regex rewrite) and the channel ID; others ignored (A42)", () => {
      const [r] = routesOf([
        route(prefix(""), {
          hashPolicy: [
            { policySpecifier: { case: "header", value: { headerName: "x-user" } }, terminal: true },
            {
              policySpecifier: {
                case: "header",
                value: {
                  headerName: "x-key",
                  regexRewrite: { pattern: { regex: "^(.*)-v\\d$" }, substitution: "\\1" },
                },
              },
            },
            { policySpecifier: { case: "filterState", value: { key: "io.grpc.channel_id" } } },
            { policySpecifier: { case: "filterState", value: { key: "other" } } },
            { policySpecifier: { case: "cookie", value: { name: "c" } } },
          ],
        }),
      ]);
      expect(r?.action).toMatchObject({
        hashPolicies: [
          { type: "header", headerName: "x-user", terminal: true },
          { type: "header", headerName: "x-key", regex: "^(.*)-v\\d$", regexSubstitution: "\\1", terminal: false },
          { type: "channel_id", terminal: false },
        ],
      });
    });

    it("retry policy (A44): parsed codes, defaults, and the virtual host's policy for routes without one", () => {
      const vhost = expectOk(
        decode([
          {
            domains: ["*"],
            retryPolicy: { retryOn: "cancelled, Unavailable,5xx", numRetries: 3 },
            routes: [
              route(prefix("/a/")),
              route(prefix("/b/"), {
                retryPolicy: {
                  retryOn: "deadline-exceeded,internal,resource-exhausted",
                  retryBackOff: { baseInterval: { nanos: 100000000 } },
                },
              }),
            ],
          },
        ]),
      ).virtualHosts[0]!;
      expect(vhost.retryPolicy).toEqual({
        retryOn: ["CANCELLED", "UNAVAILABLE"],
        numRetries: 3,
        baseIntervalMs: 25,
        maxIntervalMs: 250,
      });
      expect(vhost.routes[0]?.action).toMatchObject({ retryPolicy: vhost.retryPolicy });
      expect(vhost.routes[1]?.action).toMatchObject({
        retryPolicy: {
          retryOn: ["DEADLINE_EXCEEDED", "INTERNAL", "RESOURCE_EXHAUSTED"],
          numRetries: 1,
          baseIntervalMs: 100,
          maxIntervalMs: 1000,
        },
      });
    });

    it("max_stream_duration falls back to max_stream_duration.max_stream_duration (A31)", () => {
      const [r] = routesOf([
        route(prefix(""), { maxStreamDuration: { maxStreamDuration: { seconds: 1n, nanos: 250000000 } } }),
      ]);
      expect(r?.action).toMatchObject({ maxStreamDurationMs: 1250 });
    });

    it("auto_host_rewrite only from a trusted xDS server", () => {
      const action: ActionInit = { hostRewriteSpecifier: { case: "autoHostRewrite", value: { value: true } } };
      const vhosts = [{ domains: ["*"], routes: [route(prefix(""), action)] }];
      expect(expectOk(decode(vhosts)).virtualHosts[0]?.routes[0]?.action).toMatchObject({ autoHostRewrite: false });
      const trusted = contextWith({ server: { trustedXdsServer: true } });
      expect(expectOk(decode(vhosts, {}, trusted)).virtualHosts[0]?.routes[0]?.action).toMatchObject({
        autoHostRewrite: true,
      });
      const falseValue = [
        {
          domains: ["*"],
          routes: [route(prefix(""), { hostRewriteSpecifier: { case: "autoHostRewrite", value: {} } })],
        },
      ];
      expect(expectOk(decode(falseValue, {}, trusted)).virtualHosts[0]?.routes[0]?.action).toMatchObject({
        autoHostRewrite: false,
      });
    });
  });

  describe("cluster specifier plugins (RLS)", () => {
    it("keeps referenced plugins, drops unreferenced ones, and skips routes of optional unsupported plugins", () => {
      const update = expectOk(
        decode(
          [
            {
              domains: ["*"],
              routes: [
                {
                  match: prefix("/a/"),
                  action: {
                    case: "route",
                    value: { clusterSpecifier: { case: "clusterSpecifierPlugin", value: "rls" } },
                  },
                },
                {
                  match: prefix("/b/"),
                  action: {
                    case: "route",
                    value: { clusterSpecifier: { case: "clusterSpecifierPlugin", value: "optional" } },
                  },
                },
              ],
            },
          ],
          {
            clusterSpecifierPlugins: [
              { extension: { name: "rls", typedConfig: opaque(RLS_PLUGIN) } },
              { extension: { name: "unused", typedConfig: opaque(RLS_PLUGIN) } },
              {
                extension: { name: "optional", typedConfig: opaque("type.googleapis.com/some.Plugin") },
                isOptional: true,
              },
            ],
          },
        ),
      );
      expect(update.virtualHosts[0]?.routes.map((r) => r.action)).toMatchObject([
        { type: "cluster_specifier_plugin", clusterSpecifierPlugin: "rls" },
      ]);
      expect(Object.keys(update.clusterSpecifierPlugins)).toEqual(["rls"]);
      expect(update.clusterSpecifierPlugins.rls).toMatchObject({
        type: "grpc.lookup.v1.RouteLookupClusterSpecifier",
        kind: "bytes",
      });
    });
  });

  describe("typed_per_filter_config (A39)", () => {
    it("accepts supported overrides, FilterConfig wrappers and optional unsupported ones", () => {
      const update = expectOk(
        decode([
          {
            domains: ["*"],
            typedPerFilterConfig: {
              fault: opaque(FAULT),
              wrapped: pack(FilterConfigSchema, { config: opaque(FAULT), disabled: true }),
              optional: pack(FilterConfigSchema, {
                config: opaque("type.googleapis.com/unknown.Filter"),
                isOptional: true,
              }),
              structured: typedStruct(FAULT, { abort: {} }),
            },
            routes: [],
          },
        ]),
      );
      const overrides = update.virtualHosts[0]!.typedPerFilterConfig;
      expect(Object.keys(overrides).sort()).toEqual(["fault", "structured", "wrapped"]);
      expect(overrides.wrapped).toMatchObject({ disabled: true, isOptional: false, config: { kind: "bytes" } });
      expect(overrides.structured).toMatchObject({ config: { kind: "json", value: { abort: {} } } });
    });

    it("takes a disabled FilterConfig without reading its config (none, or one that would not validate)", () => {
      const update = expectOk(
        decode([
          {
            domains: ["*"],
            typedPerFilterConfig: {
              bare: pack(FilterConfigSchema, { disabled: true }),
              unknown: pack(FilterConfigSchema, {
                config: opaque("type.googleapis.com/unknown.Filter"),
                disabled: true,
              }),
            },
            routes: [],
          },
        ]),
      );
      const overrides = update.virtualHosts[0]!.typedPerFilterConfig;
      expect(overrides.bare).toMatchObject({ disabled: true, config: { type: "envoy.config.route.v3.FilterConfig" } });
      expect(overrides.unknown).toMatchObject({ disabled: true });
      const refused = decode([
        {
          domains: ["*"],
          typedPerFilterConfig: { bare: pack(FilterConfigSchema, {}) },
          routes: [],
        },
      ]);
      expect(refused.ok).toBe(false);
    });
  });

  describe("rejects with gRPC's rules, naming the field", () => {
    const cases: [string, VhostInit[], string, Init<typeof RouteConfigurationSchema>?][] = [
      ["a virtual host without domains", [{ routes: [] }], "virtual_hosts[0].domains: must be non-empty"],
      [
        "invalid domain patterns",
        [{ domains: ["ok.com", "a*b", ""], routes: [] }],
        'virtual_hosts[0].domains[1]: invalid domain pattern "a*b"; virtual_hosts[0].domains[2]: invalid domain pattern ""',
      ],
      [
        "a route without match",
        [
          { domains: ["*"], routes: [{}, {}] },
          { domains: ["*"], routes: [{}, {}, { action: toCluster("c") }] },
        ],
        "virtual_hosts[0].routes[0].match: field not present; virtual_hosts[0].routes[1].match: field not present; virtual_hosts[1].routes[0].match: field not present; virtual_hosts[1].routes[1].match: field not present; virtual_hosts[1].routes[2].match: field not present",
      ],
      [
        "unsupported path specifiers",
        [{ domains: ["*"], routes: [route({ pathSpecifier: { case: "connectMatcher", value: {} } }), route({})] }],
        "virtual_hosts[0].routes[0].match: invalid path specifier; virtual_hosts[0].routes[1].match: invalid path specifier",
      ],
      [
        "an invalid path regex",
        [{ domains: ["*"], routes: [route({ pathSpecifier: { case: "safeRegex", value: { regex: "(" } } })] }],
        "virtual_hosts[0].routes[0].match.safe_regex.regex: error creating path matcher: invalid regex: missing closing ): `(`",
      ],
      [
        "regexes past RE2's repeat limits (JavaScript's RegExp takes them)",
        [
          {
            domains: ["*"],
            routes: [
              route({ pathSpecifier: { case: "safeRegex", value: { regex: "/a{1001}" } } }),
              route({
                ...prefix(""),
                headers: [
                  {
                    name: "h",
                    headerMatchSpecifier: {
                      case: "stringMatch",
                      value: { matchPattern: { case: "safeRegex", value: { regex: "(a{100}){100}" } } },
                    },
                  },
                ],
              }),
            ],
          },
        ],
        "virtual_hosts[0].routes[0].match.safe_regex.regex: error creating path matcher: invalid regex: invalid repeat count: `{1001}`; " +
          "virtual_hosts[0].routes[1].match.headers[0].string_match.safe_regex.regex: invalid regex: invalid repeat count: `{100}`",
      ],
      [
        "a lookahead in a header regex (not RE2)",
        [
          {
            domains: ["*"],
            routes: [
              route({
                ...prefix(""),
                headers: [{ name: "h", headerMatchSpecifier: { case: "safeRegexMatch", value: { regex: "a(?=b)" } } }],
              }),
            ],
          },
        ],
        "virtual_hosts[0].routes[0].match.headers[0].safe_regex_match.regex: cannot create header matcher: invalid regex: invalid or unsupported Perl syntax: `(?=`",
      ],
      [
        "a header range with end before start, a header without matcher, and a string matcher without pattern",
        [
          {
            domains: ["*"],
            routes: [
              route({
                ...prefix(""),
                headers: [
                  { name: "h", headerMatchSpecifier: { case: "rangeMatch", value: { start: 5n, end: 1n } } },
                  { name: "i" },
                  { name: "j", headerMatchSpecifier: { case: "stringMatch", value: {} } },
                ],
              }),
            ],
          },
        ],
        "virtual_hosts[0].routes[0].match.headers[0]: cannot create header matcher: range end must not be smaller than range start; " +
          "virtual_hosts[0].routes[0].match.headers[1]: invalid header matcher; " +
          "virtual_hosts[0].routes[0].match.headers[2].string_match: invalid string matcher",
      ],
      [
        "a runtime fraction with an unknown denominator",
        [
          {
            domains: ["*"],
            routes: [
              route({
                ...prefix(""),
                runtimeFraction: {
                  defaultValue: { numerator: 1, denominator: 9 as FractionalPercent_DenominatorType },
                },
              }),
            ],
          },
        ],
        "virtual_hosts[0].routes[0].match.runtime_fraction.default_value.denominator: unknown denominator type",
      ],
      [
        "an empty cluster name",
        [{ domains: ["*"], routes: [{ match: prefix(""), action: toCluster("") }] }],
        "virtual_hosts[0].routes[0].route.cluster: must be non-empty",
      ],
      [
        "weighted clusters with only zero weights",
        [
          {
            domains: ["*"],
            routes: [
              {
                match: prefix(""),
                action: {
                  case: "route",
                  value: {
                    clusterSpecifier: { case: "weightedClusters", value: { clusters: [{ name: "a", weight: 0 }] } },
                  },
                },
              },
            ],
          },
        ],
        "virtual_hosts[0].routes[0].route.weighted_clusters: no valid clusters specified",
      ],
      [
        "weighted clusters with no name, no weight, and a sum above uint32",
        [
          {
            domains: ["*"],
            routes: [
              {
                match: prefix(""),
                action: {
                  case: "route",
                  value: {
                    clusterSpecifier: {
                      case: "weightedClusters",
                      value: {
                        clusters: [{ name: "", weight: 4000000000 }, { name: "b" }, { name: "c", weight: 400000000 }],
                      },
                    },
                  },
                },
              },
            ],
          },
        ],
        "virtual_hosts[0].routes[0].route.weighted_clusters.clusters[0].name: must be non-empty; " +
          "virtual_hosts[0].routes[0].route.weighted_clusters.clusters[1].weight: field not present; " +
          "virtual_hosts[0].routes[0].route.weighted_clusters: sum of cluster weights exceeds uint32 max",
      ],
      [
        "retry policies with zero retries, no base interval and zero intervals",
        [
          {
            domains: ["*"],
            retryPolicy: { numRetries: 0, retryBackOff: {} },
            routes: [
              route(prefix(""), { retryPolicy: { retryBackOff: { baseInterval: {}, maxInterval: { seconds: 0n } } } }),
            ],
          },
        ],
        "virtual_hosts[0].retry_policy.num_retries: must be greater than 0; " +
          "virtual_hosts[0].retry_policy.retry_back_off.base_interval: field not present; " +
          "virtual_hosts[0].routes[0].route.retry_policy.retry_back_off.base_interval: must be greater than 0; " +
          "virtual_hosts[0].routes[0].route.retry_policy.retry_back_off.max_interval: must be greater than 0",
      ],
      [
        "a negative max stream duration",
        [
          {
            domains: ["*"],
            routes: [route(prefix(""), { maxStreamDuration: { grpcTimeoutHeaderMax: { seconds: -1n } } })],
          },
        ],
        "virtual_hosts[0].routes[0].route.max_stream_duration.grpc_timeout_header_max.seconds: value must be in the range [0, 315576000000]",
      ],
      [
        "hash policies with an empty header name and bad regex rewrites",
        [
          {
            domains: ["*"],
            routes: [
              route(prefix(""), {
                hashPolicy: [
                  { policySpecifier: { case: "header", value: { headerName: "" } } },
                  { policySpecifier: { case: "header", value: { headerName: "h", regexRewrite: {} } } },
                  {
                    policySpecifier: {
                      case: "header",
                      value: { headerName: "h", regexRewrite: { pattern: { regex: "[" } } },
                    },
                  },
                  {
                    policySpecifier: {
                      case: "header",
                      value: { headerName: "h", regexRewrite: { pattern: { regex: "(a)b" }, substitution: "\\2" } },
                    },
                  },
                  {
                    policySpecifier: {
                      case: "header",
                      value: { headerName: "h", regexRewrite: { pattern: { regex: "a" }, substitution: "x\\" } },
                    },
                  },
                ],
              }),
            ],
          },
        ],
        "virtual_hosts[0].routes[0].route.hash_policy[0].header.header_name: must be non-empty; " +
          "virtual_hosts[0].routes[0].route.hash_policy[1].header.regex_rewrite.pattern: field not present; " +
          "virtual_hosts[0].routes[0].route.hash_policy[2].header.regex_rewrite.pattern.regex: errors compiling regex: missing closing ]: `[`; " +
          'virtual_hosts[0].routes[0].route.hash_policy[3].header.regex_rewrite.substitution: rewrite "\\2" refers to group \\2, but the regex has 1 capturing group; ' +
          'virtual_hosts[0].routes[0].route.hash_policy[4].header.regex_rewrite.substitution: rewrite "x\\" has an invalid escape: a backslash must be followed by a digit or \\',
      ],
      [
        "an unknown cluster specifier plugin name",
        [
          {
            domains: ["*"],
            routes: [
              {
                match: prefix(""),
                action: {
                  case: "route",
                  value: { clusterSpecifier: { case: "clusterSpecifierPlugin", value: "nope" } },
                },
              },
            ],
          },
        ],
        'virtual_hosts[0].routes[0].route.cluster_specifier_plugin: unknown cluster specifier plugin name "nope"',
      ],
      [
        "unsupported, duplicate and empty cluster specifier plugins",
        [],
        "cluster_specifier_plugins[0].extension.typed_config.value[some.Plugin]: unsupported ClusterSpecifierPlugin type; " +
          'cluster_specifier_plugins[1].extension.name: duplicate name "p"; ' +
          "cluster_specifier_plugins[2].extension: field not present",
        {
          clusterSpecifierPlugins: [
            { extension: { name: "p", typedConfig: opaque("type.googleapis.com/some.Plugin") } },
            { extension: { name: "p", typedConfig: opaque(RLS_PLUGIN) } },
            {},
          ],
        },
      ],
      [
        "unsupported, empty-named and unparseable filter overrides",
        [
          {
            domains: ["*"],
            typedPerFilterConfig: {
              "": opaque(FAULT),
              bad: opaque("type.googleapis.com/unknown.Filter"),
              broken: {
                typeUrl: "type.googleapis.com/envoy.config.route.v3.FilterConfig",
                value: new Uint8Array([0x0a, 0x05]),
              },
              notype: { typeUrl: "", value: new Uint8Array() },
              router: pack(RouterSchema, {}),
            },
            routes: [],
          },
        ],
        "virtual_hosts[0].typed_per_filter_config[]: filter name must be non-empty; " +
          "virtual_hosts[0].typed_per_filter_config[bad].value[unknown.Filter]: unsupported filter type; " +
          "virtual_hosts[0].typed_per_filter_config[broken].value[envoy.config.route.v3.FilterConfig]: could not parse FilterConfig; " +
          "virtual_hosts[0].typed_per_filter_config[notype].type_url: field not present; " +
          "virtual_hosts[0].typed_per_filter_config[router].value[envoy.extensions.filters.http.router.v3.Router]: unsupported filter type",
      ],
    ];
    it.each(cases)("%s", (_name, vhosts, error, extra) => {
      expectError(decode(vhosts, extra ?? {}), error, "rc");
    });
  });
});
