// Server Listeners (A36) and their RouteConfigurations, built as the control plane serves them: filter chains with a
// FilterChainMatch, a DownstreamTlsContext naming certificate provider instances, an HttpConnectionManager with RDS
// or an inline route_config, routes with non_forwarding_action, and the RBAC filter (A41) before the router.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { FilterChainSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { FilterChainMatch_ConnectionSourceType } from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { type Listener, ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { type RBAC, RBAC_Action, RBACSchema } from "@xdskit/protos/envoy/config/rbac/v3/rbac_pb";
import type { RouteSchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { type RouteConfiguration, RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  RBACPerRouteSchema,
  RBACSchema as RbacFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/http/rbac/v3/rbac_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import {
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { DownstreamTlsContextSchema } from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";

export const LISTENER_TEMPLATE = "grpc/server?xds.resource.listening_address=%s";

/** The Listener name a server listening on host:port watches with LISTENER_TEMPLATE. */
export function listenerName(host: string, port: number): string {
  return LISTENER_TEMPLATE.replace("%s", host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
}

export interface MatchInit {
  readonly prefixRanges?: readonly string[];
  readonly sourceType?: "ANY" | "SAME_IP_OR_LOOPBACK" | "EXTERNAL";
  readonly sourcePrefixRanges?: readonly string[];
  readonly sourcePorts?: readonly number[];
  /** Default "raw_buffer" (an empty one never matches: docs/decisions.md#empty-transport-protocol). */
  readonly transportProtocol?: string;
}

export interface TlsInit {
  /** The certificate provider instance of the server's identity. */
  readonly identity: string;
  /** The instance of the roots that verify client certificates (mTLS). */
  readonly roots?: string;
  readonly requireClientCertificate?: boolean;
}

export interface ChainInit {
  readonly name?: string;
  readonly match?: MatchInit;
  readonly tls?: TlsInit;
  /** Routes from RDS; or `routes` inline. Default: inline, every path to non_forwarding_action. */
  readonly routeConfigName?: string;
  readonly routes?: RouteConfiguration;
  /** HTTP filters before the router (e.g. `rbacFilter(...)`). */
  readonly httpFilters?: readonly HttpFilter[];
}

export interface ServerListenerInit {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly filterChains?: readonly ChainInit[];
  readonly defaultChain?: ChainInit;
}

function cidr(text: string) {
  const [addressPrefix = "", prefixLen] = text.split("/");
  return { addressPrefix, prefixLen: prefixLen === undefined ? undefined : Number(prefixLen) };
}

const routerFilter = (): HttpFilter =>
  create(HttpFilterSchema, {
    name: "router",
    configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
  });

type ChainShape = MessageInitShape<typeof FilterChainSchema>;

function filterChain(init: ChainInit): ChainShape {
  const match = init.match ?? {};
  const hcm = create(HttpConnectionManagerSchema, {
    statPrefix: "server",
    routeSpecifier:
      init.routeConfigName !== undefined
        ? {
            case: "rds",
            value: {
              configSource: { configSourceSpecifier: { case: "ads", value: {} } },
              routeConfigName: init.routeConfigName,
            },
          }
        : { case: "routeConfig", value: init.routes ?? serverRoutes("inline") },
    httpFilters: [...(init.httpFilters ?? []), routerFilter()],
  });
  const tls = init.tls;
  return {
    name: init.name ?? "",
    filterChainMatch: {
      prefixRanges: (match.prefixRanges ?? []).map(cidr),
      sourceType: FilterChainMatch_ConnectionSourceType[match.sourceType ?? "ANY"],
      sourcePrefixRanges: (match.sourcePrefixRanges ?? []).map(cidr),
      sourcePorts: [...(match.sourcePorts ?? [])],
      transportProtocol: match.transportProtocol ?? "raw_buffer",
    },
    filters: [{ name: "hcm", configType: { case: "typedConfig", value: anyPack(HttpConnectionManagerSchema, hcm) } }],
    ...(tls === undefined
      ? {}
      : {
          transportSocket: {
            name: "envoy.transport_sockets.tls",
            configType: {
              case: "typedConfig",
              value: anyPack(
                DownstreamTlsContextSchema,
                create(DownstreamTlsContextSchema, {
                  commonTlsContext: {
                    tlsCertificateProviderInstance: { instanceName: tls.identity },
                    ...(tls.roots === undefined
                      ? {}
                      : {
                          validationContextType: {
                            case: "validationContext",
                            value: { caCertificateProviderInstance: { instanceName: tls.roots } },
                          },
                        }),
                  },
                  ...(tls.requireClientCertificate === undefined
                    ? {}
                    : { requireClientCertificate: tls.requireClientCertificate }),
                }),
              ),
            },
          },
        }),
  };
}

/** A server Listener on host:port (its `address`), named `name`. */
export function serverListener(init: ServerListenerInit): Listener {
  const { defaultChain } = init;
  return create(ListenerSchema, {
    name: init.name,
    address: {
      address: {
        case: "socketAddress",
        value: { address: init.host, portSpecifier: { case: "portValue", value: init.port } },
      },
    },
    filterChains: (init.filterChains ?? [{}]).map(filterChain),
    ...(defaultChain === undefined ? {} : { defaultFilterChain: filterChain(defaultChain) }),
  });
}

export type RouteInit = MessageInitShape<typeof RouteSchema>;

/** A route with non_forwarding_action for `prefix` (default every path). */
export function nonForwardingRoute(
  prefix = "",
  extra: { readonly name?: string; readonly typedPerFilterConfig?: Record<string, unknown> } = {},
): RouteInit {
  return {
    match: { pathSpecifier: { case: "prefix", value: prefix } },
    action: { case: "nonForwardingAction", value: {} },
    ...(extra.name === undefined ? {} : { name: extra.name }),
    ...(extra.typedPerFilterConfig === undefined ? {} : { typedPerFilterConfig: extra.typedPerFilterConfig as never }),
  };
}

/** A RouteConfiguration with one virtual host for `*` holding `routes` (default: one non_forwarding_action route). */
export function serverRoutes(
  name: string,
  routes: readonly RouteInit[] = [nonForwardingRoute()],
  virtualHost: { readonly domains?: readonly string[]; readonly typedPerFilterConfig?: Record<string, unknown> } = {},
): RouteConfiguration {
  return create(RouteConfigurationSchema, {
    name,
    virtualHosts: [
      {
        name: `${name}-vh`,
        domains: [...(virtualHost.domains ?? ["*"])],
        routes: [...routes],
        ...(virtualHost.typedPerFilterConfig === undefined
          ? {}
          : { typedPerFilterConfig: virtualHost.typedPerFilterConfig as never }),
      },
    ],
  });
}

export type PolicyInit = NonNullable<MessageInitShape<typeof RBACSchema>["policies"]>[string];

/** `envoy.config.rbac.v3.RBAC` with `action` and named policies. */
export function rbacRules(action: "ALLOW" | "DENY" | "LOG", policies: Record<string, PolicyInit>): RBAC {
  return create(RBACSchema, { action: RBAC_Action[action], policies });
}

/** The RBAC HTTP filter (A41), named `name`, with `rules` (none: every call allowed). */
export function rbacFilter(rules?: RBAC, name = "rbac"): HttpFilter {
  return create(HttpFilterSchema, {
    name,
    configType: {
      case: "typedConfig",
      value: anyPack(RbacFilterSchema, create(RbacFilterSchema, rules === undefined ? {} : { rules })),
    },
  });
}

/** An `RBACPerRoute` override, for a route's or virtual host's `typed_per_filter_config`. */
export function rbacPerRoute(rules?: RBAC) {
  return anyPack(
    RBACPerRouteSchema,
    create(RBACPerRouteSchema, rules === undefined ? {} : { rbac: create(RbacFilterSchema, { rules }) }),
  );
}
