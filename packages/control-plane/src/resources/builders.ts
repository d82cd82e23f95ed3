import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
  ClusterSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { TransportSocket } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  ApiVersion,
  type ConfigSource,
  ConfigSourceSchema,
} from "@xdskit/protos/envoy/config/core/v3/config_source_pb";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { type Listener, ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { type RouteConfiguration, RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { ClusterConfigSchema } from "@xdskit/protos/envoy/extensions/clusters/aggregate/v3/cluster_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import {
  type HttpConnectionManager,
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";

/** A ConfigSource that says "over the same ADS stream". */
export function adsConfigSource(): ConfigSource {
  return create(ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: {} },
    resourceApiVersion: ApiVersion.V3,
  });
}

/** The router filter, last in every HTTP filter chain. */
export function routerFilter(): HttpFilter {
  return create(HttpFilterSchema, {
    name: "envoy.filters.http.router",
    configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
  });
}

export interface ListenerInit {
  readonly name: string;
  /** The RouteConfiguration to fetch over ADS (RDS). Give this or `routeConfig`. */
  readonly routeConfigName?: string;
  /** A RouteConfiguration inlined in the listener instead of RDS. */
  readonly routeConfig?: RouteConfiguration;
  /** HTTP filters to run before the router filter (which is always appended). */
  readonly httpFilters?: readonly HttpFilter[];
  /** Default: the listener name. */
  readonly statPrefix?: string;
}

/** A client-side (gRPC) listener: an `api_listener` holding an HttpConnectionManager that points at RDS. */
export function buildListener(init: ListenerInit): Listener {
  if ((init.routeConfigName === undefined) === (init.routeConfig === undefined)) {
    throw new TypeError(`buildListener(${init.name}): give exactly one of routeConfigName and routeConfig`);
  }
  const hcm: HttpConnectionManager = create(HttpConnectionManagerSchema, {
    statPrefix: init.statPrefix ?? init.name,
    routeSpecifier:
      init.routeConfig !== undefined
        ? { case: "routeConfig", value: init.routeConfig }
        : {
            case: "rds",
            value: { configSource: adsConfigSource(), routeConfigName: init.routeConfigName ?? "" },
          },
    httpFilters: [...(init.httpFilters ?? []), routerFilter()],
  });
  return create(ListenerSchema, {
    name: init.name,
    apiListener: { apiListener: anyPack(HttpConnectionManagerSchema, hcm) },
  });
}

export interface WeightedClusterInit {
  readonly name: string;
  readonly weight: number;
}

export interface RouteConfigurationInit {
  readonly name: string;
  /** Every request goes to this cluster. Give this or `weightedClusters`. */
  readonly cluster?: string;
  readonly weightedClusters?: readonly WeightedClusterInit[];
  /** Default `["*"]`. */
  readonly domains?: readonly string[];
  /** Default `""` (every path). */
  readonly pathPrefix?: string;
  /** Default the route configuration's name. */
  readonly virtualHostName?: string;
}

const UINT32_MAX = 0xffff_ffff;

function isUint32(value: number, min: number): boolean {
  return Number.isInteger(value) && value >= min && value <= UINT32_MAX;
}

/**
 * The weighted clusters with `total_weight` set to their sum: gRPC C-core 1.29 NACKs a route without it ("incorrect
 * total weight": it takes an unset total as 100), and clients that ignore the field accept it set. Weights are integers, 0
 * allowed, summing to 1..2^32-1, as every gRPC client requires.
 */
function weightedClusters(owner: string, clusters: readonly WeightedClusterInit[]) {
  if (clusters.length === 0) throw new TypeError(`${owner}: weightedClusters is empty`);
  let totalWeight = 0;
  for (const c of clusters) {
    if (!isUint32(c.weight, 0)) throw new TypeError(`${owner}: weight of ${c.name} must be an integer >= 0`);
    totalWeight += c.weight;
  }
  if (totalWeight === 0 || totalWeight > UINT32_MAX) {
    throw new TypeError(`${owner}: the weights must sum to 1..${UINT32_MAX}, got ${totalWeight}`);
  }
  return { clusters: clusters.map((c) => ({ name: c.name, weight: c.weight })), totalWeight };
}

/** A route configuration with one virtual host and one prefix route to a cluster (or weighted clusters). */
export function buildRouteConfiguration(init: RouteConfigurationInit): RouteConfiguration {
  const owner = `buildRouteConfiguration(${init.name})`;
  if ((init.cluster === undefined) === (init.weightedClusters === undefined)) {
    throw new TypeError(`${owner}: give exactly one of cluster and weightedClusters`);
  }
  return create(RouteConfigurationSchema, {
    name: init.name,
    virtualHosts: [
      {
        name: init.virtualHostName ?? init.name,
        domains: [...(init.domains ?? ["*"])],
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: init.pathPrefix ?? "" } },
            action: {
              case: "route",
              value: {
                clusterSpecifier:
                  init.cluster !== undefined
                    ? { case: "cluster", value: init.cluster }
                    : { case: "weightedClusters", value: weightedClusters(owner, init.weightedClusters ?? []) },
              },
            },
          },
        ],
      },
    ],
  });
}

export interface ClusterInit {
  readonly name: string;
  /** The ClusterLoadAssignment name to fetch over ADS (EDS). Default: empty, meaning the cluster name. */
  readonly edsServiceName?: string;
  /**
   * Default ROUND_ROBIN. The enum is `Cluster_LbPolicy` of `@xdskit/protos/envoy/config/cluster/v3/cluster_pb`
   * (envoy's `Cluster.LbPolicy`); gRPC clients accept ROUND_ROBIN, LEAST_REQUEST and RING_HASH and NACK the others.
   */
  readonly lbPolicy?: Cluster_LbPolicy;
  /** Report load to the management server itself (`lrs_server: self`). */
  readonly lrsServerSelf?: boolean;
  /**
   * `lrs_report_endpoint_metrics` (gRFC A85): the backend metrics clients copy from each call's ORCA report into
   * their load reports, e.g. `cpu_utilization`, `named_metrics.queue_depth`, `named_metrics.*`. Default: none.
   */
  readonly lrsReportEndpointMetrics?: readonly string[];
  /** TLS to the cluster's endpoints (A29): `buildUpstreamTlsSocket(...)`. Default: plaintext. */
  readonly transportSocket?: TransportSocket;
}

/** An EDS cluster whose endpoints come over ADS. */
export function buildCluster(init: ClusterInit): Cluster {
  return create(ClusterSchema, {
    name: init.name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: { edsConfig: adsConfigSource(), serviceName: init.edsServiceName ?? "" },
    lbPolicy: init.lbPolicy ?? Cluster_LbPolicy.ROUND_ROBIN,
    ...(init.lrsServerSelf
      ? { lrsServer: create(ConfigSourceSchema, { configSourceSpecifier: { case: "self", value: {} } }) }
      : {}),
    lrsReportEndpointMetrics: [...(init.lrsReportEndpointMetrics ?? [])],
    ...(init.transportSocket === undefined ? {} : { transportSocket: init.transportSocket }),
  });
}

/** An endpoint at `address:port` (an IP address, or a host name for clients that resolve it). */
function socketEndpoint(address: string, port: number) {
  return {
    address: {
      address: {
        case: "socketAddress" as const,
        value: { address, portSpecifier: { case: "portValue" as const, value: port } },
      },
    },
  };
}

/**
 * A LOGICAL_DNS cluster (gRFC A75): clients resolve `host` themselves and connect to `port`; its one endpoint is
 * carried in the cluster's own `load_assignment`.
 */
export function buildLogicalDnsCluster(init: { readonly name: string; readonly host: string; readonly port: number }) {
  return create(ClusterSchema, {
    name: init.name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
    lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
    loadAssignment: {
      clusterName: init.name,
      endpoints: [
        { lbEndpoints: [{ hostIdentifier: { case: "endpoint", value: socketEndpoint(init.host, init.port) } }] },
      ],
    },
  });
}

/** An aggregate cluster (gRFC A37) over `clusters`, highest priority first. */
export function buildAggregateCluster(init: { readonly name: string; readonly clusters: readonly string[] }) {
  const config = create(ClusterConfigSchema, { clusters: [...init.clusters] });
  return create(ClusterSchema, {
    name: init.name,
    clusterDiscoveryType: {
      case: "clusterType",
      value: { name: "envoy.clusters.aggregate", typedConfig: anyPack(ClusterConfigSchema, config) },
    },
  });
}

export type EndpointHealth = "unknown" | "healthy" | "unhealthy" | "draining" | "timeout" | "degraded";

const HEALTH: Record<EndpointHealth, HealthStatus> = {
  unknown: HealthStatus.UNKNOWN,
  healthy: HealthStatus.HEALTHY,
  unhealthy: HealthStatus.UNHEALTHY,
  draining: HealthStatus.DRAINING,
  timeout: HealthStatus.TIMEOUT,
  degraded: HealthStatus.DEGRADED,
};

export interface EndpointInit {
  /** An IP address (or a host name, for clients that resolve it). */
  readonly address: string;
  readonly port: number;
  /** Default "unknown" (which clients treat as usable). */
  readonly health?: EndpointHealth;
  /** `load_balancing_weight`; unset by default. */
  readonly weight?: number;
}

export interface LocalityInit {
  readonly region?: string;
  readonly zone?: string;
  readonly subZone?: string;
  /** Default 0 (highest). Priorities must be contiguous from 0. */
  readonly priority?: number;
  /** `load_balancing_weight` of the locality; default 1. */
  readonly weight?: number;
  /** Endpoints, or `"host:port"` / `"[v6]:port"` strings. */
  readonly endpoints: readonly (EndpointInit | string)[];
}

export interface ClusterLoadAssignmentInit {
  readonly clusterName: string;
  readonly localities: readonly LocalityInit[];
}

/** Parses `"host:port"` or `"[v6]:port"`. */
export function parseHostPort(text: string): EndpointInit {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || !(port >= 0 && port <= 65535)) throw new TypeError(`not a host:port: "${text}"`);
  return { address: match[1] ?? match[2] ?? "", port };
}

/**
 * Checks what gRPC clients reject in a ClusterLoadAssignment: weights outside 1..2^32-1, a port outside 0..65535,
 * one address twice, one locality twice in a priority, a gap in the priorities.
 */
function checkAssignment(init: ClusterLoadAssignmentInit, endpoints: readonly EndpointInit[][]): void {
  const owner = `buildClusterLoadAssignment(${init.clusterName})`;
  const addresses = new Set<string>();
  const localities = new Set<string>();
  const priorities = new Set<number>();
  init.localities.forEach((locality, i) => {
    const priority = locality.priority ?? 0;
    if (!isUint32(priority, 0)) throw new TypeError(`${owner}: localities[${i}].priority must be an integer >= 0`);
    if (!isUint32(locality.weight ?? 1, 1)) throw new TypeError(`${owner}: localities[${i}].weight must be >= 1`);
    const key = JSON.stringify([priority, locality.region ?? "", locality.zone ?? "", locality.subZone ?? ""]);
    if (localities.has(key))
      throw new TypeError(`${owner}: localities[${i}] repeats a locality of priority ${priority}`);
    localities.add(key);
    priorities.add(priority);
    for (const endpoint of endpoints[i] ?? []) {
      const address = `${endpoint.address}:${endpoint.port}`;
      if (!(Number.isInteger(endpoint.port) && endpoint.port >= 0 && endpoint.port <= 65535)) {
        throw new TypeError(`${owner}: port of ${endpoint.address} must be in 0-65535`);
      }
      if (endpoint.weight !== undefined && !isUint32(endpoint.weight, 1)) {
        throw new TypeError(`${owner}: weight of ${address} must be >= 1`);
      }
      if (addresses.has(address)) throw new TypeError(`${owner}: endpoint ${address} appears twice`);
      addresses.add(address);
    }
  });
  for (let p = 0; p < priorities.size; p++) {
    if (!priorities.has(p)) throw new TypeError(`${owner}: priorities must run from 0 without gaps; ${p} is missing`);
  }
}

/** Endpoints for a cluster, grouped by locality, with priority, weight and health. */
export function buildClusterLoadAssignment(init: ClusterLoadAssignmentInit): ClusterLoadAssignment {
  const endpoints = init.localities.map((locality) =>
    locality.endpoints.map((item) => (typeof item === "string" ? parseHostPort(item) : item)),
  );
  checkAssignment(init, endpoints);
  return create(ClusterLoadAssignmentSchema, {
    clusterName: init.clusterName,
    endpoints: init.localities.map((locality, i) => ({
      locality: { region: locality.region ?? "", zone: locality.zone ?? "", subZone: locality.subZone ?? "" },
      priority: locality.priority ?? 0,
      loadBalancingWeight: locality.weight ?? 1,
      lbEndpoints: (endpoints[i] ?? []).map((endpoint) => ({
        hostIdentifier: {
          case: "endpoint" as const,
          value: socketEndpoint(endpoint.address, endpoint.port),
        },
        healthStatus: HEALTH[endpoint.health ?? "unknown"],
        ...(endpoint.weight !== undefined ? { loadBalancingWeight: endpoint.weight } : {}),
      })),
    })),
  });
}
