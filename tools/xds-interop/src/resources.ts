// The xDS resources the driver publishes, in the shapes Traffic Director gives the document's configuration: one
// listener for the service, a route configuration (the URL map), one EDS cluster per backend service, and one
// locality per managed instance group (MIG), with the client's zone at priority 0.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  type LocalityInit,
  type ResourceMessage,
} from "@xdskit/control-plane";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { Listener } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import {
  type HeaderMatcher,
  HeaderMatcherSchema,
  type RouteAction,
  RouteActionSchema,
  type RouteMatchSchema,
  RouteSchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { type RouteConfiguration, RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { HttpFilter } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import type { Backend } from "./backend.js";

/** The service name: clients dial `xds:///${SERVICE_NAME}`. */
export const SERVICE_NAME = "xds-interop.test";
export const ROUTE_CONFIG_NAME = "xds-interop-url-map";
/** The client's zone (its bootstrap locality); a MIG in another zone is a failover locality. */
export const CLIENT_ZONE = "zone-a";
export const OTHER_ZONE = "zone-b";

/** The service's listener; `httpFilters` run before the router (the fault filter, for fault_injection). */
export function serviceListener(httpFilters: readonly HttpFilter[] = []): Listener {
  return buildListener({ name: SERVICE_NAME, routeConfigName: ROUTE_CONFIG_NAME, httpFilters });
}

export type RouteMatchInit = MessageInitShape<typeof RouteMatchSchema>;

export interface RouteInit {
  readonly match: RouteMatchInit;
  /** One cluster, or `weighted` clusters (A28's per-call pick). */
  readonly cluster?: string;
  readonly weighted?: Readonly<Record<string, number>>;
  /** Sets more of the route action: `maxStreamDuration`, `retryPolicy`, `hashPolicy`. */
  readonly editAction?: (action: RouteAction) => void;
  /** The route's per-filter configs (by filter name). */
  readonly typedPerFilterConfig?: Readonly<Record<string, Any>>;
}

/** The default route of the URL map: every path. */
export const ANY_PATH: RouteMatchInit = { pathSpecifier: { case: "prefix", value: "/" } };

/** The URL map: one virtual host for every domain, its routes in order (the first match wins). */
export function urlMap(routes: readonly RouteInit[]): RouteConfiguration {
  return create(RouteConfigurationSchema, {
    name: ROUTE_CONFIG_NAME,
    virtualHosts: [
      {
        name: "xds-interop-host",
        domains: ["*"],
        routes: routes.map((route) => {
          if ((route.cluster === undefined) === (route.weighted === undefined)) {
            throw new TypeError("a route needs exactly one of cluster and weighted");
          }
          const weighted = Object.entries(route.weighted ?? {});
          const action = create(RouteActionSchema, {
            clusterSpecifier:
              route.cluster !== undefined
                ? { case: "cluster", value: route.cluster }
                : {
                    case: "weightedClusters",
                    value: {
                      clusters: weighted.map(([name, weight]) => ({ name, weight })),
                      totalWeight: weighted.reduce((sum, [, weight]) => sum + weight, 0),
                    },
                  },
          });
          route.editAction?.(action);
          return create(RouteSchema, {
            match: route.match,
            typedPerFilterConfig: { ...route.typedPerFilterConfig },
            action: { case: "route", value: action },
          });
        }),
      },
    ],
  });
}

/** A header matcher of a route (`invert` negates it). */
export function header(
  name: string,
  specifier: NonNullable<MessageInitShape<typeof HeaderMatcherSchema>["headerMatchSpecifier"]>,
  invert = false,
): HeaderMatcher {
  return create(HeaderMatcherSchema, { name, headerMatchSpecifier: specifier, invertMatch: invert });
}

/** One MIG of a backend service: a locality holding its backends. */
export interface InstanceGroup {
  readonly backends: readonly Backend[];
  readonly zone: string;
  /** Tells apart MIGs of one zone. */
  readonly subZone: string;
  /** 0 for the client's zone; failover localities come after. */
  readonly priority: number;
}

/**
 * A backend service: its EDS cluster and the endpoints of its MIGs, weighted equally. `editCluster` sets more of the
 * cluster (circuit breakers, LB policy, outlier detection).
 */
export function backendService(
  name: string,
  groups: readonly InstanceGroup[],
  editCluster?: (cluster: Cluster) => void,
): ResourceMessage[] {
  const localities: LocalityInit[] = groups.map((group) => ({
    region: "local",
    zone: group.zone,
    subZone: group.subZone,
    priority: group.priority,
    endpoints: group.backends.map((backend) => ({ address: "127.0.0.1", port: backend.port })),
  }));
  const cluster = buildCluster({ name });
  editCluster?.(cluster);
  return [cluster, buildClusterLoadAssignment({ clusterName: name, localities })];
}
