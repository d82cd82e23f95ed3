// Building blocks for the policy tests over HTTP/2: durations, per-call ORCA trailers from a backend, a cluster's
// xds_wrr_locality + client_side_weighted_round_robin policy, HTTPFault filters and the single route's action.
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { anyPack, DurationSchema } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import {
  type Cluster,
  LoadBalancingPolicy_PolicySchema,
  LoadBalancingPolicySchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { TypedExtensionConfigSchema } from "@xdskit/protos/envoy/config/core/v3/extension_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import {
  type HttpFilter,
  HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { ClientSideWeightedRoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb";
import { WrrLocalitySchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb";
import { FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";

export const seconds = (s: number) =>
  create(DurationSchema, { seconds: BigInt(Math.floor(s)), nanos: Math.round((s % 1) * 1e9) });

/** Per-call ORCA trailers with this application utilization and 100 qps. */
export const orcaTrailer =
  (applicationUtilization: number): Interceptor =>
  (next) =>
  async (req) => {
    const res = await next(req);
    const report = create(OrcaLoadReportSchema, { applicationUtilization, rpsFractional: 100 });
    res.trailer.set(
      "endpoint-load-metrics-bin",
      Buffer.from(toBinary(OrcaLoadReportSchema, report)).toString("base64"),
    );
    return res;
  };

/** Sets the cluster's policy to xds_wrr_locality over client_side_weighted_round_robin with `init`. */
export function wrrPolicy(cluster: Cluster, init: MessageInitShape<typeof ClientSideWeightedRoundRobinSchema>): void {
  const wrr = create(ClientSideWeightedRoundRobinSchema, init);
  const locality = create(WrrLocalitySchema, {
    endpointPickingPolicy: create(LoadBalancingPolicySchema, {
      policies: [
        create(LoadBalancingPolicy_PolicySchema, {
          typedExtensionConfig: create(TypedExtensionConfigSchema, {
            name: "wrr",
            typedConfig: anyPack(ClientSideWeightedRoundRobinSchema, wrr),
          }),
        }),
      ],
    }),
  });
  cluster.loadBalancingPolicy = create(LoadBalancingPolicySchema, {
    policies: [
      create(LoadBalancingPolicy_PolicySchema, {
        typedExtensionConfig: create(TypedExtensionConfigSchema, {
          name: "loc",
          typedConfig: anyPack(WrrLocalitySchema, locality),
        }),
      }),
    ],
  });
}

/** The route action of the (single) route, to edit. */
export function routeAction(route: RouteConfiguration) {
  const a = route.virtualHosts[0]?.routes[0]?.action;
  if (a?.case !== "route") throw new Error("route action expected");
  return a.value;
}

/** An HTTPFault filter with the given fault, for the Listener's chain. */
export function faultFilter(init: MessageInitShape<typeof HTTPFaultSchema>): HttpFilter {
  return create(HttpFilterSchema, {
    name: "envoy.filters.http.fault",
    configType: { case: "typedConfig", value: anyPack(HTTPFaultSchema, create(HTTPFaultSchema, init)) },
  });
}

/** 100 % (a FractionalPercent over a hundred). */
export const ALL = create(FractionalPercentSchema, { numerator: 100 });
