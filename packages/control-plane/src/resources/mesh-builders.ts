// Builders for the mesh resources xDS-enabled gRPC servers and TLS clients read: a server Listener (A36) with filter
// chains, FilterChainMatch, DownstreamTlsContext (A29) and an HttpConnectionManager (RDS or an inline route
// configuration whose routes carry `non_forwarding_action`), the RBAC HTTP filter and its per-route override (A41),
// and the UpstreamTlsContext of a Cluster (A29). Each builds exactly what gRPC servers and clients accept; a
// malformed init throws a TypeError naming the field.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import type { CidrRangeSchema } from "@xdskit/protos/envoy/config/core/v3/address_pb";
import { type TransportSocket, TransportSocketSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  type FilterChain,
  FilterChainMatch_ConnectionSourceType,
  FilterChainSchema,
} from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { type Listener, ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { type PolicySchema, RBAC_Action } from "@xdskit/protos/envoy/config/rbac/v3/rbac_pb";
import { type RouteConfiguration, RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  RBACPerRouteSchema,
  RBACSchema as RbacFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/http/rbac/v3/rbac_pb";
import {
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import type { CommonTlsContext } from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";
import {
  DownstreamTlsContextSchema,
  UpstreamTlsContextSchema,
} from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";
import type { StringMatcherSchema } from "@xdskit/protos/envoy/type/matcher/v3/string_pb";
import { adsConfigSource, routerFilter } from "./builders.js";

/** A certificate provider instance of the clients' and servers' bootstraps (`certificate_providers`). */
export interface CertificateInstanceInit {
  readonly instanceName: string;
  /** Default empty (the instance's default certificate; `file_watcher` has one). */
  readonly certificateName?: string;
}

/** A29 server TLS: the server's identity and, for mTLS, the roots client certificates must chain to. */
export interface DownstreamTlsInit {
  readonly identity: string | CertificateInstanceInit;
  /** Roots that verify client certificates; without them the server asks for none. */
  readonly roots?: string | CertificateInstanceInit;
  /** Refuse clients without a certificate (needs `roots`). Default: true when `roots` is given. */
  readonly requireClientCertificate?: boolean;
}

/** A29 client TLS: the roots server certificates must chain to, an identity for mTLS, SAN checks. */
export interface UpstreamTlsInit {
  /** A provider instance, or `"system"` for the system's roots (A82). */
  readonly roots: string | CertificateInstanceInit;
  /** For mTLS. */
  readonly identity?: string | CertificateInstanceInit;
  /**
   * The server's certificate must carry a SAN one of these matches (`match_subject_alt_names`): a string is an exact
   * match; otherwise an envoy StringMatcher init (`{ matchPattern: { case: "prefix", value: "spiffe://td/" } }`).
   */
  readonly matchSubjectAltNames?: readonly (string | MessageInitShape<typeof StringMatcherSchema>)[];
  readonly sni?: string;
}

/** A36 FilterChainMatch. Ranges are `"10.0.0.0/8"`, `"2001:db8::/32"`, or a bare address (a /32 or /128). */
export interface FilterChainMatchInit {
  readonly prefixRanges?: readonly string[];
  readonly sourceType?: "ANY" | "SAME_IP_OR_LOOPBACK" | "EXTERNAL";
  readonly sourcePrefixRanges?: readonly string[];
  readonly sourcePorts?: readonly number[];
  /**
   * Default `"raw_buffer"`, the only value gRPC servers match (an empty one never matches here, and in grpc-js-xds;
   * grpc-go and C-core read it as a wildcard).
   */
  readonly transportProtocol?: string;
  /** Fields gRPC servers never match: a chain setting one is never selected. */
  readonly destinationPort?: number;
  readonly serverNames?: readonly string[];
  readonly applicationProtocols?: readonly string[];
}

/** One filter chain of a server Listener: its match, TLS, routes (RDS or inline) and HTTP filters. */
export interface FilterChainInit {
  readonly name?: string;
  /** Default: match every connection (`transport_protocol: raw_buffer`). Ignored for the default filter chain. */
  readonly match?: FilterChainMatchInit;
  /** Absent: plaintext (or the server's fallback credentials). */
  readonly tls?: DownstreamTlsInit;
  /** The RouteConfiguration to fetch over ADS. Give this or `routeConfig`. */
  readonly routeConfigName?: string;
  /** An inline RouteConfiguration (`buildServerRouteConfiguration`). */
  readonly routeConfig?: RouteConfiguration;
  /** HTTP filters before the router (which is always appended), e.g. `buildRbacFilter(...)`. */
  readonly httpFilters?: readonly HttpFilter[];
}

export interface ServerListenerInit {
  /** The name the server's bootstrap template gives, e.g. `grpc/server?xds.resource.listening_address=0.0.0.0:50051`. */
  readonly name: string;
  /** The address and port the server listens on. */
  readonly address: { readonly host: string; readonly port: number };
  readonly filterChains?: readonly FilterChainInit[];
  /** Used when no chain matches a connection (required when `filterChains` is empty). */
  readonly defaultFilterChain?: FilterChainInit;
}

const SOURCE_TYPES = {
  ANY: FilterChainMatch_ConnectionSourceType.ANY,
  SAME_IP_OR_LOOPBACK: FilterChainMatch_ConnectionSourceType.SAME_IP_OR_LOOPBACK,
  EXTERNAL: FilterChainMatch_ConnectionSourceType.EXTERNAL,
} as const;

const DOWNSTREAM_TLS_SOCKET = "envoy.transport_sockets.tls";

function instance(init: string | CertificateInstanceInit) {
  return typeof init === "string"
    ? { instanceName: init, certificateName: "" }
    : { instanceName: init.instanceName, certificateName: init.certificateName ?? "" };
}

/** `"10.0.0.0/8"` → CidrRange; throws naming `field` when it is not `address[/length]`. */
function cidrRange(text: string, field: string): MessageInitShape<typeof CidrRangeSchema> {
  const match = /^([0-9A-Fa-f.:]+)(?:\/(\d{1,3}))?$/.exec(text);
  if (match === null) throw new TypeError(`${field}: "${text}" is not an address or address/length`);
  const address = match[1] ?? "";
  const length = match[2] === undefined ? (address.includes(":") ? 128 : 32) : Number(match[2]);
  if (length > (address.includes(":") ? 128 : 32)) throw new TypeError(`${field}: "${text}" has a prefix too long`);
  return { addressPrefix: address, prefixLen: length };
}

function checkPort(port: number, field: string): void {
  if (!(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new TypeError(`${field}: ${port} is not a port`);
}

/** A server filter chain's `transport_socket`: a DownstreamTlsContext naming certificate provider instances. */
export function buildDownstreamTlsSocket(init: DownstreamTlsInit): TransportSocket {
  const require = init.requireClientCertificate ?? init.roots !== undefined;
  if (require && init.roots === undefined) {
    throw new TypeError("buildDownstreamTlsSocket: requireClientCertificate needs roots");
  }
  const common: MessageInitShape<typeof DownstreamTlsContextSchema>["commonTlsContext"] = {
    tlsCertificateProviderInstance: instance(init.identity),
    ...(init.roots === undefined
      ? {}
      : {
          validationContextType: {
            case: "validationContext" as const,
            value: { caCertificateProviderInstance: instance(init.roots) },
          },
        }),
  };
  const context = create(DownstreamTlsContextSchema, {
    commonTlsContext: common as CommonTlsContext,
    // Only when true: a present BoolValue false without a validation context is NACKed by grpc-js-xds 1.14, which
    // reads the field's presence as "require".
    ...(require ? { requireClientCertificate: true } : {}),
  });
  return create(TransportSocketSchema, {
    name: DOWNSTREAM_TLS_SOCKET,
    configType: { case: "typedConfig", value: anyPack(DownstreamTlsContextSchema, context) },
  });
}

/** A Cluster's `transport_socket`: an UpstreamTlsContext (A29). */
export function buildUpstreamTlsSocket(init: UpstreamTlsInit): TransportSocket {
  const sans = (init.matchSubjectAltNames ?? []).map((matcher) =>
    typeof matcher === "string" ? { matchPattern: { case: "exact" as const, value: matcher } } : matcher,
  );
  const validation =
    init.roots === "system"
      ? { systemRootCerts: {}, matchSubjectAltNames: sans }
      : { caCertificateProviderInstance: instance(init.roots), matchSubjectAltNames: sans };
  const context = create(UpstreamTlsContextSchema, {
    commonTlsContext: {
      ...(init.identity === undefined ? {} : { tlsCertificateProviderInstance: instance(init.identity) }),
      validationContextType: { case: "validationContext", value: validation },
    },
    sni: init.sni ?? "",
  });
  return create(TransportSocketSchema, {
    name: DOWNSTREAM_TLS_SOCKET,
    configType: { case: "typedConfig", value: anyPack(UpstreamTlsContextSchema, context) },
  });
}

function filterChainMatch(match: FilterChainMatchInit, owner: string) {
  for (const [i, port] of (match.sourcePorts ?? []).entries()) checkPort(port, `${owner}.sourcePorts[${i}]`);
  if (match.destinationPort !== undefined) checkPort(match.destinationPort, `${owner}.destinationPort`);
  return {
    prefixRanges: (match.prefixRanges ?? []).map((r, i) => cidrRange(r, `${owner}.prefixRanges[${i}]`)),
    sourceType: SOURCE_TYPES[match.sourceType ?? "ANY"],
    sourcePrefixRanges: (match.sourcePrefixRanges ?? []).map((r, i) =>
      cidrRange(r, `${owner}.sourcePrefixRanges[${i}]`),
    ),
    sourcePorts: [...(match.sourcePorts ?? [])],
    transportProtocol: match.transportProtocol ?? "raw_buffer",
    ...(match.destinationPort === undefined ? {} : { destinationPort: match.destinationPort }),
    serverNames: [...(match.serverNames ?? [])],
    applicationProtocols: [...(match.applicationProtocols ?? [])],
  };
}

function filterChain(init: FilterChainInit, owner: string, isDefault: boolean): FilterChain {
  if ((init.routeConfigName === undefined) === (init.routeConfig === undefined)) {
    throw new TypeError(`${owner}: give exactly one of routeConfigName and routeConfig`);
  }
  const hcm = create(HttpConnectionManagerSchema, {
    statPrefix: init.name ?? owner,
    routeSpecifier:
      init.routeConfig !== undefined
        ? { case: "routeConfig", value: init.routeConfig }
        : { case: "rds", value: { configSource: adsConfigSource(), routeConfigName: init.routeConfigName ?? "" } },
    httpFilters: [...(init.httpFilters ?? []), routerFilter()],
  });
  return create(FilterChainSchema, {
    name: init.name ?? "",
    ...(isDefault ? {} : { filterChainMatch: filterChainMatch(init.match ?? {}, `${owner}.match`) }),
    filters: [
      {
        name: "envoy.filters.network.http_connection_manager",
        configType: { case: "typedConfig", value: anyPack(HttpConnectionManagerSchema, hcm) },
      },
    ],
    ...(init.tls === undefined ? {} : { transportSocket: buildDownstreamTlsSocket(init.tls) }),
  });
}

/**
 * A server Listener (A36): a TCP address, filter chains and an optional default chain, each with one
 * HttpConnectionManager (the router last) and optional TLS.
 */
export function buildServerListener(init: ServerListenerInit): Listener {
  const owner = `buildServerListener(${init.name})`;
  checkPort(init.address.port, `${owner}: address.port`);
  const chains = init.filterChains ?? [];
  if (chains.length === 0 && init.defaultFilterChain === undefined) {
    throw new TypeError(`${owner}: give filterChains or a defaultFilterChain`);
  }
  return create(ListenerSchema, {
    name: init.name,
    address: {
      address: {
        case: "socketAddress",
        value: { address: init.address.host, portSpecifier: { case: "portValue", value: init.address.port } },
      },
    },
    filterChains: chains.map((chain, i) => filterChain(chain, `${owner}: filterChains[${i}]`, false)),
    ...(init.defaultFilterChain === undefined
      ? {}
      : { defaultFilterChain: filterChain(init.defaultFilterChain, `${owner}: defaultFilterChain`, true) }),
  });
}

export interface ServerRouteConfigurationInit {
  readonly name: string;
  /** Default `["*"]`. */
  readonly domains?: readonly string[];
  /** Default `""` (every path). */
  readonly pathPrefix?: string;
  /** Per-filter overrides of the virtual host (e.g. `{ "envoy.filters.http.rbac": rbacPerRoute(...) }`). */
  readonly typedPerFilterConfig?: Readonly<Record<string, Any>>;
  /** Per-filter overrides of the one route. */
  readonly routeTypedPerFilterConfig?: Readonly<Record<string, Any>>;
}

/** A route configuration for servers: one virtual host, one prefix route with `non_forwarding_action` (A36). */
export function buildServerRouteConfiguration(init: ServerRouteConfigurationInit): RouteConfiguration {
  return create(RouteConfigurationSchema, {
    name: init.name,
    virtualHosts: [
      {
        name: init.name,
        domains: [...(init.domains ?? ["*"])],
        typedPerFilterConfig: { ...(init.typedPerFilterConfig ?? {}) },
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: init.pathPrefix ?? "" } },
            action: { case: "nonForwardingAction", value: {} },
            typedPerFilterConfig: { ...(init.routeTypedPerFilterConfig ?? {}) },
          },
        ],
      },
    ],
  });
}

/** RBAC rules (A41): the action and the policies by name (envoy `Policy` inits). */
export interface RbacRulesInit {
  readonly action: "ALLOW" | "DENY";
  readonly policies: Readonly<Record<string, MessageInitShape<typeof PolicySchema>>>;
}

function rbacConfig(rules: RbacRulesInit | undefined) {
  if (rules === undefined) return {};
  return {
    rules: {
      action: rules.action === "ALLOW" ? RBAC_Action.ALLOW : RBAC_Action.DENY,
      policies: { ...rules.policies },
    },
  };
}

/** The RBAC HTTP filter (A41); without rules it lets every call through. Put it before the router. */
export function buildRbacFilter(rules?: RbacRulesInit, name = "envoy.filters.http.rbac"): HttpFilter {
  return create(HttpFilterSchema, {
    name,
    configType: { case: "typedConfig", value: anyPack(RbacFilterSchema, create(RbacFilterSchema, rbacConfig(rules))) },
  });
}

/** An `RBACPerRoute` override for `typed_per_filter_config`; without rules it turns the filter off for the route. */
export function rbacPerRoute(rules?: RbacRulesInit): Any {
  return anyPack(
    RBACPerRouteSchema,
    create(RBACPerRouteSchema, rules === undefined ? {} : { rbac: rbacConfig(rules) }),
  );
}
