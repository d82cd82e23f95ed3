// Valid-looking LDS, RDS, CDS and EDS resources for the fuzz properties: each kind is an arbitrary of serialized
// messages, built with the control plane's builders (what a real server sends) with varied fields.
import { create, type DescMessage, toBinary } from "@bufbuild/protobuf";
import { buildCluster, buildListener, buildRouteConfiguration } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import fc from "fast-check";
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  type ResourceType,
  routeConfigurationResourceType,
} from "../../src/index.js";
import { claArb } from "./cla-arbitrary.js";

export interface ResourceKind {
  readonly label: "LDS" | "RDS" | "CDS" | "EDS";
  readonly type: ResourceType<unknown>;
  readonly schema: DescMessage;
  /** The resource name a decoded message carries. */
  nameOf(message: unknown): string;
  /** Serialized resources named `name`. */
  bytes(name: string): fc.Arbitrary<Uint8Array>;
}

const nameArb = fc.constantFrom("a", "b", "c");

const routeArb = (name: string) =>
  fc
    .record({
      cluster: fc.option(nameArb, { nil: undefined }),
      weights: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
      // The builder refuses weights gRPC rejects; a zero weight is written into the built message instead, so the
      // decoders still meet it.
      zeroWeight: fc.boolean(),
      domains: fc.array(fc.constantFrom("*", "a.example", "*.b", "c.*", ""), { minLength: 0, maxLength: 2 }),
      pathPrefix: fc.constantFrom("", "/", "/svc"),
    })
    .map(({ cluster, weights, zeroWeight, domains, pathPrefix }) => {
      const routeConfig = buildRouteConfiguration({
        name,
        domains,
        pathPrefix,
        ...(cluster === undefined
          ? { weightedClusters: weights.map((weight, i) => ({ name: `w${i}`, weight })) }
          : { cluster }),
      });
      const action = routeConfig.virtualHosts[0]?.routes[0]?.action;
      if (zeroWeight && action?.case === "route" && action.value.clusterSpecifier.case === "weightedClusters") {
        const first = action.value.clusterSpecifier.value.clusters[0];
        if (first) first.weight = 0;
      }
      return routeConfig;
    });

export const RESOURCE_KINDS: readonly ResourceKind[] = [
  {
    label: "LDS",
    type: listenerResourceType as ResourceType<unknown>,
    schema: ListenerSchema,
    nameOf: (message) => (message as { name: string }).name,
    bytes: (name) =>
      fc
        .oneof(
          nameArb.map((routeConfigName) => buildListener({ name, routeConfigName })),
          routeArb("inline").map((routeConfig) => buildListener({ name, routeConfig })),
        )
        .map((listener) => toBinary(ListenerSchema, listener)),
  },
  {
    label: "RDS",
    type: routeConfigurationResourceType as ResourceType<unknown>,
    schema: RouteConfigurationSchema,
    nameOf: (message) => (message as { name: string }).name,
    bytes: (name) => routeArb(name).map((routes) => toBinary(RouteConfigurationSchema, routes)),
  },
  {
    label: "CDS",
    type: clusterResourceType as ResourceType<unknown>,
    schema: ClusterSchema,
    nameOf: (message) => (message as { name: string }).name,
    bytes: (name) =>
      fc
        .record({
          edsServiceName: fc.constantFrom("", "eds-a"),
          lbPolicy: fc.constantFrom(0, 1, 2, 3, 5, 7),
          lrsServerSelf: fc.boolean(),
          maxRequests: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }),
          maxEjectionPercent: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
        })
        .map(({ edsServiceName, lbPolicy, lrsServerSelf, maxRequests, maxEjectionPercent }) => {
          const cluster = buildCluster({ name, edsServiceName, lbPolicy, lrsServerSelf });
          const extra = create(ClusterSchema, {
            ...(maxRequests === undefined ? {} : { circuitBreakers: { thresholds: [{ maxRequests }] } }),
            ...(maxEjectionPercent === undefined ? {} : { outlierDetection: { maxEjectionPercent } }),
          });
          // Concatenated encodings merge: the builder's cluster plus the extra fields.
          return new Uint8Array([...toBinary(ClusterSchema, cluster), ...toBinary(ClusterSchema, extra)]);
        }),
  },
  {
    label: "EDS",
    type: endpointResourceType as ResourceType<unknown>,
    schema: ClusterLoadAssignmentSchema,
    nameOf: (message) => (message as { clusterName: string }).clusterName,
    bytes: (name) =>
      claArb.map((init) =>
        toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, { ...init, clusterName: name })),
      ),
  },
];
