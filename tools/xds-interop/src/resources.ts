// The xDS resources the driver publishes, in the shapes Traffic Director gives the document's configuration: one
// listener for the service, a route configuration (the URL map), one EDS cluster per backend service, and one
// locality per managed instance group (MIG), with the client's zone at priority 0.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  type LocalityInit,
  type ResourceMessage,
} from "@xdskit/control-plane";
import type { Listener } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import {
  type HeaderMatcher,
  HeaderMatcherSchema,
  type RouteMatchSchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { type RouteConfiguration, RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { Backend } from "./backend.js";

/** The service name: clients dial `xds:///${SERVICE_NAME}`. */
export const SERVICE_NAME = "xds-interop.test";
export const ROUTE_CONFIG_NAME = "xds-interop-url-map";
/** The client's zone (its bootstrap locality); a MIG in another zone is a failover locality. */
export const CLIENT_ZONE = "zone-a";
export const OTHER_ZONE = "zone-b";

export function serviceListener(): Listener {
  return buildListener({ name: SERVICE_NAME, routeConfigName: ROUTE_CONFIG_NAME });
}

export type RouteMatchInit = MessageInitShape<typeof RouteMatchSchema>;

export interface RouteInit {
  readonly match: RouteMatchInit;
  /** One cluster, or `weighted` clusters (A28's per-call pick). */
  readonly cluster?: string;
  readonly weighted?: Readonly<Record<string, number>>;
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
          return {
            match: route.match,
            action: {
              case: "route" as const,
              value: {
                clusterSpecifier:
                  route.cluster !== undefined
                    ? { case: "cluster" as const, value: route.cluster }
                    : {
                        case: "weightedClusters" as const,
                        value: {
                          clusters: weighted.map(([name, weight]) => ({ name, weight })),
                          totalWeight: weighted.reduce((sum, [, weight]) => sum + weight, 0),
                        },
                      },
              },
            },
          };
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

/** A backend service: its EDS cluster and the endpoints of its MIGs, weighted equally. */
export function backendService(name: string, groups: readonly InstanceGroup[]): ResourceMessage[] {
  const localities: LocalityInit[] = groups.map((group) => ({
    region: "local",
    zone: group.zone,
    subZone: group.subZone,
    priority: group.priority,
    endpoints: group.backends.map((backend) => ({ address: "127.0.0.1", port: backend.port })),
  }));
  return [buildCluster({ name }), buildClusterLoadAssignment({ clusterName: name, localities })];
}
