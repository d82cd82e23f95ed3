import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { DynamicParameterConstraintsMapSchema } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

const PREFIX = "type.googleapis.com/";

/** `type.googleapis.com/envoy.config.listener.v3.Listener` */
export const LDS_TYPE_URL = PREFIX + ListenerSchema.typeName;
/** `type.googleapis.com/envoy.config.route.v3.RouteConfiguration` */
export const RDS_TYPE_URL = PREFIX + RouteConfigurationSchema.typeName;
/** `type.googleapis.com/envoy.config.cluster.v3.Cluster` */
export const CDS_TYPE_URL = PREFIX + ClusterSchema.typeName;
/** `type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment` */
export const EDS_TYPE_URL = PREFIX + ClusterLoadAssignmentSchema.typeName;
/** The `envoy.service.discovery.v3.Resource` wrapper. */
export const RESOURCE_WRAPPER_TYPE_URL = PREFIX + ResourceSchema.typeName;

/**
 * `type.googleapis.com/envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap`: the DPDS resource
 * (docs/decisions.md#the-dpds-resource), always sent with `cache_control.do_not_cache`.
 */
export const DPDS_TYPE_URL = PREFIX + DynamicParameterConstraintsMapSchema.typeName;

/** The SotW types whose every response carries every subscribed resource that exists. */
export const DEFAULT_FULL_STATE_TYPE_URLS: readonly string[] = [LDS_TYPE_URL, CDS_TYPE_URL];

/**
 * Push order when several types change at once: the parameters clients subscribe with first, then clusters and
 * endpoints before the listeners and routes using them.
 */
export const PUSH_ORDER: readonly string[] = [DPDS_TYPE_URL, CDS_TYPE_URL, EDS_TYPE_URL, LDS_TYPE_URL, RDS_TYPE_URL];

export function typeUrlOfName(typeName: string): string {
  return PREFIX + typeName;
}
