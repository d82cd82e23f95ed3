// The RBAC filter's config (A41) as the decoders read it: on a server Listener's HTTP filter chain, and as an
// RBACPerRoute override in a RouteConfiguration. Each refusal names its field.
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import type { RBACSchema as RbacRulesSchema } from "@xdskit/protos/envoy/config/rbac/v3/rbac_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  RBACPerRouteSchema,
  RBACSchema as RbacFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/http/rbac/v3/rbac_pb";
import { RouterSchema as RouterConfigSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { describe, expect, it } from "vitest";
import { listenerResourceType, routeConfigurationResourceType } from "../../src/resources/index.js";
import { decodeWith, expectError, expectOk, type Init, isDeeplyFrozen, pack } from "./context.js";

type RulesInit = Init<typeof RbacRulesSchema>;
type FilterInit = Init<typeof RbacFilterSchema>;

const RBAC_TYPE = "envoy.extensions.filters.http.rbac.v3.RBAC";
const HCM = "typed_config.value[envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager]";
const FILTER = `filter_chains[0].filters[0].${HCM}.http_filters[0].typed_config.value[${RBAC_TYPE}]`;

function serverListener(rbac: FilterInit) {
  const hcm = pack(HttpConnectionManagerSchema, {
    routeSpecifier: {
      case: "rds",
      value: { configSource: { configSourceSpecifier: { case: "ads", value: {} } }, routeConfigName: "r" },
    },
    httpFilters: [
      { name: "rbac", configType: { case: "typedConfig", value: pack(RbacFilterSchema, rbac) } },
      { name: "router", configType: { case: "typedConfig", value: pack(RouterConfigSchema, {}) } },
    ],
  });
  return decodeWith(listenerResourceType, ListenerSchema, {
    name: "s",
    address: {
      address: { case: "socketAddress", value: { address: "::", portSpecifier: { case: "portValue", value: 1 } } },
    },
    filterChains: [
      {
        filterChainMatch: { transportProtocol: "raw_buffer" },
        filters: [{ name: "hcm", configType: { case: "typedConfig", value: hcm } }],
      },
    ],
  });
}

function rbacOf(rules: RulesInit | undefined, extra: FilterInit = {}) {
  const result = serverListener({ ...(rules === undefined ? {} : { rules }), ...extra });
  const update = expectOk(result);
  if (update.kind !== "server") throw new Error("expected a server Listener");
  return update.filterChains[0]!.httpFilters[0]!.filter;
}

const anyPermission = { rule: { case: "any" as const, value: true } };
const anyPrincipal = { identifier: { case: "any" as const, value: true } };

describe("the RBAC filter's config (A41)", () => {
  it("reads policies (sorted by name), permissions and principals into rule trees", () => {
    const filter = rbacOf({
      action: 1,
      policies: {
        zeta: { permissions: [anyPermission], principals: [anyPrincipal] },
        alpha: {
          permissions: [
            {
              rule: {
                case: "andRules",
                value: {
                  rules: [
                    {
                      rule: {
                        case: "urlPath",
                        value: { rule: { case: "path", value: { matchPattern: { case: "exact", value: "/svc/M" } } } },
                      },
                    },
                    { rule: { case: "destinationPort", value: 8080 } },
                    { rule: { case: "destinationPortRange", value: { start: 9000, end: 9100 } } },
                    { rule: { case: "destinationIp", value: { addressPrefix: "10.1.2.3", prefixLen: 8 } } },
                    {
                      rule: {
                        case: "header",
                        value: { name: ":method", headerMatchSpecifier: { case: "exactMatch", value: "POST" } },
                      },
                    },
                    { rule: { case: "metadata", value: { invert: true } } },
                    { rule: { case: "requestedServerName", value: { matchPattern: { case: "prefix", value: "" } } } },
                    {
                      rule: {
                        case: "notRule",
                        value: {
                          rule: { case: "requestedServerName", value: { matchPattern: { case: "exact", value: "x" } } },
                        },
                      },
                    },
                  ],
                },
              },
            },
          ],
          principals: [
            {
              identifier: {
                case: "authenticated",
                value: { principalName: { matchPattern: { case: "suffix", value: "/sa/a" } } },
              },
            },
            { identifier: { case: "authenticated", value: {} } },
            { identifier: { case: "sourceIp", value: { addressPrefix: "10.0.0.0", prefixLen: 8 } } },
            { identifier: { case: "directRemoteIp", value: { addressPrefix: "::1", prefixLen: 128 } } },
            { identifier: { case: "remoteIp", value: { addressPrefix: "192.168.0.0" } } },
            {
              identifier: {
                case: "orIds",
                value: { ids: [anyPrincipal, { identifier: { case: "notId", value: anyPrincipal } }] },
              },
            },
          ],
        },
      },
    });
    expect(filter).toEqual({
      type: "rbac",
      rules: {
        action: "DENY",
        policies: [
          {
            name: "alpha",
            permissions: [
              {
                type: "and",
                rules: [
                  { type: "url_path", path: { type: "exact", value: "/svc/M", ignoreCase: false } },
                  { type: "destination_port", start: 8080, end: 8081 },
                  { type: "destination_port", start: 9000, end: 9100 },
                  { type: "destination_ip", range: { family: 4, address: "10.0.0.0", prefixLen: 8 } },
                  {
                    type: "header",
                    header: { name: ":method", invert: false, type: "exact", value: "POST", ignoreCase: false },
                  },
                  { type: "metadata", invert: true },
                  { type: "requested_server_name", matches: true },
                  { type: "not", rule: { type: "requested_server_name", matches: false } },
                ],
              },
            ],
            principals: [
              { type: "authenticated", principalName: { type: "suffix", value: "/sa/a", ignoreCase: false } },
              { type: "authenticated" },
              { type: "source_ip", range: { family: 4, address: "10.0.0.0", prefixLen: 8 } },
              { type: "source_ip", range: { family: 6, address: "::1", prefixLen: 128 } },
              { type: "source_ip", range: { family: 4, address: "0.0.0.0", prefixLen: 0 } },
              { type: "or", rules: [{ type: "any" }, { type: "not", rule: { type: "any" } }] },
            ],
          },
          { name: "zeta", permissions: [{ type: "any" }], principals: [{ type: "any" }] },
        ],
      },
    });
    expect(isDeeplyFrozen(filter)).toBe(true);
  });

  it("a filter without rules lets everything through; shadow rules are ignored", () => {
    expect(rbacOf(undefined)).toEqual({ type: "rbac" });
    expect(rbacOf(undefined, { shadowRules: { action: 2 } })).toEqual({ type: "rbac" });
  });

  it("skips optional audit loggers", () => {
    const filter = rbacOf({
      auditLoggingOptions: { loggerConfigs: [{ auditLogger: { name: "stdout" }, isOptional: true }] },
    });
    expect(filter).toEqual({ type: "rbac", rules: { action: "ALLOW", policies: [] } });
  });

  describe("NACKs, naming the field", () => {
    // Loosely typed on purpose: the cases set oneof members protobuf-es's init types cannot follow here.
    const policy = (extra: object) =>
      ({ p: { permissions: [anyPermission], principals: [anyPrincipal], ...extra } }) as never;
    const permission = (rule: object) => ({ p: { permissions: [{ rule }], principals: [anyPrincipal] } }) as never;
    const principal = (identifier: object) =>
      ({ p: { permissions: [anyPermission], principals: [{ identifier }] } }) as never;
    const cases: [string, FilterInit, string][] = [
      [
        "the LOG action",
        { rules: { action: 2 } },
        `${FILTER}.rules.action: LOG is not supported (docs/decisions.md#rbac-log-action)`,
      ],
      ["an unknown action", { rules: { action: 7 as never } }, `${FILTER}.rules.action: unknown action 7`],
      [
        "a CEL condition",
        { rules: { policies: policy({ condition: {} }) } },
        `${FILTER}.rules.policies[p].condition: CEL conditions are not supported (A41)`,
      ],
      [
        "a checked CEL condition",
        { rules: { policies: policy({ checkedCondition: {} }) } },
        `${FILTER}.rules.policies[p].checked_condition: CEL conditions are not supported (A41)`,
      ],
      [
        "a permission header matcher on grpc-*",
        {
          rules: {
            policies: permission({
              case: "header",
              value: { name: "grpc-timeout", headerMatchSpecifier: { case: "presentMatch", value: true } },
            }),
          },
        },
        `${FILTER}.rules.policies[p].permissions[0].header.name: "grpc-timeout": matching grpc- headers is not supported (A41)`,
      ],
      [
        "a principal header matcher on :scheme",
        {
          rules: {
            policies: principal({
              case: "header",
              value: { name: ":scheme", headerMatchSpecifier: { case: "exactMatch", value: "https" } },
            }),
          },
        },
        `${FILTER}.rules.policies[p].principals[0].header.name: ":scheme": matching :scheme is not supported (A41)`,
      ],
      [
        "a nested grpc- header matcher, upper-case",
        {
          rules: {
            policies: permission({
              case: "notRule",
              value: {
                rule: {
                  case: "header",
                  value: { name: "Grpc-Encoding", headerMatchSpecifier: { case: "presentMatch", value: true } },
                },
              },
            }),
          },
        },
        `${FILTER}.rules.policies[p].permissions[0].not_rule.header.name: "Grpc-Encoding": matching grpc- headers is not supported (A41)`,
      ],
      ["the matcher form", { matcher: {} }, `${FILTER}.matcher: the matcher form of RBAC is not supported (use rules)`],
      [
        "a matcher permission",
        { rules: { policies: permission({ case: "matcher", value: { name: "m" } }) } },
        `${FILTER}.rules.policies[p].permissions[0].matcher: not supported`,
      ],
      [
        "a uri_template permission",
        { rules: { policies: permission({ case: "uriTemplate", value: { name: "u" } }) } },
        `${FILTER}.rules.policies[p].permissions[0].uri_template: not supported`,
      ],
      [
        "a filter_state principal",
        { rules: { policies: principal({ case: "filterState", value: { key: "k" } }) } },
        `${FILTER}.rules.policies[p].principals[0].filter_state: not supported`,
      ],
      [
        "a permission with no rule",
        { rules: { policies: { p: { permissions: [{}], principals: [anyPrincipal] } } } },
        `${FILTER}.rules.policies[p].permissions[0]: invalid permission (no rule set)`,
      ],
      [
        "a principal with no identifier",
        { rules: { policies: { p: { permissions: [anyPermission], principals: [{}] } } } },
        `${FILTER}.rules.policies[p].principals[0]: invalid principal (no identifier set)`,
      ],
      [
        "a url_path without a path",
        { rules: { policies: permission({ case: "urlPath", value: {} }) } },
        `${FILTER}.rules.policies[p].permissions[0].url_path: invalid path matcher (no path)`,
      ],
      [
        "an invalid regex",
        {
          rules: {
            policies: permission({
              case: "urlPath",
              value: { rule: { case: "path", value: { matchPattern: { case: "safeRegex", value: { regex: "(" } } } } },
            }),
          },
        },
        `${FILTER}.rules.policies[p].permissions[0].url_path.path.safe_regex.regex: invalid regex: missing closing ): \`(\``,
      ],
      [
        "a range that is not an IP",
        { rules: { policies: principal({ case: "remoteIp", value: { addressPrefix: "example.com" } }) } },
        `${FILTER}.rules.policies[p].principals[0].remote_ip.address_prefix: "example.com" is not an IP address`,
      ],
      [
        "a non-optional audit logger",
        { rules: { auditLoggingOptions: { loggerConfigs: [{ auditLogger: { name: "stdout_logger" } }] } } },
        `${FILTER}.rules.audit_logging_options.logger_configs[0].audit_logger: unsupported audit logger "stdout_logger" (no audit logger is built in; mark it is_optional to skip it)`,
      ],
    ];
    for (const [what, init, error] of cases) it(what, () => expectError(serverListener(init), error, "s"));
  });
});

describe("RBACPerRoute overrides (A41)", () => {
  const route = (typedPerFilterConfig: Record<string, ReturnType<typeof pack>>) =>
    decodeWith(routeConfigurationResourceType, RouteConfigurationSchema, {
      name: "rc",
      virtualHosts: [
        {
          domains: ["*"],
          typedPerFilterConfig,
          routes: [
            {
              match: { pathSpecifier: { case: "prefix", value: "" } },
              action: { case: "nonForwardingAction", value: {} },
              typedPerFilterConfig,
            },
          ],
        },
      ],
    });

  it("carries the validated override on virtual hosts and routes; without rbac, the filter is off", () => {
    const update = expectOk(route({ authz: pack(RBACPerRouteSchema, { rbac: { rules: { action: 1 } } }) }));
    const vhost = update.virtualHosts[0]!;
    expect(vhost.typedPerFilterConfig.authz?.parsed).toEqual({ type: "rbac", rules: { action: "DENY", policies: [] } });
    expect(vhost.routes[0]!.typedPerFilterConfig.authz?.parsed).toEqual({
      type: "rbac",
      rules: { action: "DENY", policies: [] },
    });
    expect(vhost.routes[0]!.action).toEqual({ type: "non_forwarding" });
    const off = expectOk(route({ authz: pack(RBACPerRouteSchema, {}) }));
    expect(off.virtualHosts[0]!.typedPerFilterConfig.authz?.parsed).toEqual({ type: "rbac" });
  });

  it("NACKs an invalid override, naming it", () => {
    expectError(
      route({ authz: pack(RBACPerRouteSchema, { rbac: { rules: { action: 2 } } }) }),
      "virtual_hosts[0].typed_per_filter_config[authz].value[envoy.extensions.filters.http.rbac.v3.RBACPerRoute].rbac.rules.action: LOG is not supported (docs/decisions.md#rbac-log-action); " +
        "virtual_hosts[0].routes[0].typed_per_filter_config[authz].value[envoy.extensions.filters.http.rbac.v3.RBACPerRoute].rbac.rules.action: LOG is not supported (docs/decisions.md#rbac-log-action)",
      "rc",
    );
  });

  it("an RBAC filter is server-only: a client Listener refuses it unless optional", () => {
    const hcm = pack(HttpConnectionManagerSchema, {
      routeSpecifier: {
        case: "rds",
        value: { configSource: { configSourceSpecifier: { case: "ads", value: {} } }, routeConfigName: "r" },
      },
      httpFilters: [
        { name: "rbac", configType: { case: "typedConfig", value: pack(RbacFilterSchema, {}) } },
        { name: "router", configType: { case: "typedConfig", value: pack(RouterConfigSchema, {}) } },
      ],
    });
    expectError(
      decodeWith(listenerResourceType, ListenerSchema, { name: "c", apiListener: { apiListener: hcm } }),
      `api_listener.api_listener.value[envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager].http_filters[0].typed_config.value[${RBAC_TYPE}]: filter is not supported on clients`,
      "c",
    );
  });
});
