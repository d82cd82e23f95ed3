import type { JsonObject } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Cluster_DiscoveryType } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import { type ClusterView, ClusterViewReader } from "../gen/envoy/config/cluster/v3/cluster_view.js";
import type { OutlierDetectionView } from "../gen/envoy/config/cluster/v3/outlier_detection_view.js";
import { ClusterConfigViewReader } from "../gen/envoy/extensions/clusters/aggregate/v3/cluster_view.js";
import { joinHostPort } from "../shared/ip-address.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";
import type {
  ClusterCommon,
  ClusterResourceTypeOptions,
  ClusterUpdate,
  OrcaPropagationConfig,
  OrcaSelection,
  OutlierDetectionConfig,
} from "./cluster-types.js";
import { decodeResource, type ResourceMessage } from "./decode-view.js";
import { parseDurationMs } from "./duration.js";
import { HEALTH_STATUS_NAMES, type HealthStatusName } from "./endpoint-types.js";
import { parseLbPolicy } from "./lb-policy.js";
import { parseUpstreamTls } from "./upstream-tls.js";
import { deepFreezeJson, EMPTY, keptList, type ValidationErrors } from "./validation.js";
import { readView } from "./view-runtime.js";

type ClusterBody = ClusterUpdate extends infer U ? (U extends unknown ? Omit<U, "raw"> : never) : never;

type Discovery =
  | { readonly type: "eds"; readonly edsServiceName: string }
  | { readonly type: "logical_dns"; readonly dnsHostname: string }
  | { readonly type: "aggregate"; readonly prioritizedClusterNames: readonly string[] };

const AGGREGATE_CONFIG = "envoy.extensions.clusters.aggregate.v3.ClusterConfig";
const TELEMETRY_LABELS_KEY = "com.google.csm.telemetry_labels";
const DEFAULT_OVERRIDE_HOST_STATUSES: readonly HealthStatusName[] = Object.freeze(["UNKNOWN", "HEALTHY"]);
const USABLE_OVERRIDE_STATUSES = new Set<HealthStatusName>(["UNKNOWN", "HEALTHY", "DRAINING"]);
const EMPTY_METADATA: Readonly<Record<string, JsonObject>> = Object.freeze({});
const UNKNOWN_TELEMETRY_LABELS = Object.freeze({
  "csm.service_name": "unknown",
  "csm.service_namespace_name": "unknown",
});
const A64_PROPAGATION: OrcaPropagationConfig = Object.freeze({ mode: "a64" });
const NO_PROPAGATION: OrcaSelection = Object.freeze({
  mode: "a85",
  cpuUtilization: false,
  memUtilization: false,
  applicationUtilization: false,
  allNamedMetrics: false,
  namedMetrics: EMPTY,
});
const NAMED_METRICS_PREFIX = "named_metrics.";

function parseEds(cluster: ClusterView, errors: ValidationErrors): Discovery {
  const config = cluster.edsClusterConfig;
  if (config === undefined) {
    errors.add("eds_cluster_config", "field not present");
    return { type: "eds", edsServiceName: "" };
  }
  if (config.edsConfig === undefined) {
    errors.add("eds_cluster_config.eds_config", "field not present");
  } else {
    const kind = config.edsConfig.configSourceSpecifier.case;
    if (kind !== "ads" && kind !== "self")
      errors.add("eds_cluster_config.eds_config", "ConfigSource is not ads or self");
  }
  if (config.serviceName === "" && cluster.name.startsWith("xdstp:")) {
    errors.add("eds_cluster_config.service_name", "must be set if Cluster resource has an xdstp name");
  }
  return { type: "eds", edsServiceName: config.serviceName };
}

function parseLogicalDns(cluster: ClusterView, errors: ValidationErrors): Discovery {
  const failed: Discovery = { type: "logical_dns", dnsHostname: "" };
  const assignment = cluster.loadAssignment;
  if (assignment === undefined) {
    errors.add("load_assignment", "field not present for LOGICAL_DNS cluster");
    return failed;
  }
  if (assignment.endpoints.length !== 1) {
    errors.add(
      "load_assignment.endpoints",
      `must contain exactly one locality for LOGICAL_DNS cluster, found ${assignment.endpoints.length}`,
    );
    return failed;
  }
  const lbEndpoints = assignment.endpoints[0]!.lbEndpoints;
  if (lbEndpoints.length !== 1) {
    errors.add(
      "load_assignment.endpoints[0].lb_endpoints",
      `must contain exactly one endpoint for LOGICAL_DNS cluster, found ${lbEndpoints.length}`,
    );
    return failed;
  }
  const path = "load_assignment.endpoints[0].lb_endpoints[0].endpoint";
  const host = lbEndpoints[0]!.hostIdentifier;
  if (host.case !== "endpoint") {
    errors.add(path, "field not present");
    return failed;
  }
  const address = host.value.address;
  if (address === undefined) {
    errors.add(`${path}.address`, "field not present");
    return failed;
  }
  if (address.address.case !== "socketAddress") {
    errors.add(`${path}.address.socket_address`, "field not present");
    return failed;
  }
  const socketAddress = address.address.value;
  const socketPath = `${path}.address.socket_address`;
  if (socketAddress.resolverName !== "") {
    errors.add(`${socketPath}.resolver_name`, "LOGICAL_DNS clusters must NOT have a custom resolver name set");
  }
  if (socketAddress.address === "") errors.add(`${socketPath}.address`, "field not present");
  let port = 0;
  if (socketAddress.portSpecifier.case === "portValue") {
    port = socketAddress.portSpecifier.value;
  } else {
    errors.add(`${socketPath}.port_value`, "field not present");
  }
  return { type: "logical_dns", dnsHostname: joinHostPort(socketAddress.address, port) };
}

function parseAggregate(cluster: ClusterView, errors: ValidationErrors): Discovery {
  const failed: Discovery = { type: "aggregate", prioritizedClusterNames: EMPTY };
  const custom = cluster.clusterDiscoveryType.case === "clusterType" ? cluster.clusterDiscoveryType.value : undefined;
  const typedConfig = custom?.typedConfig;
  if (typedConfig === undefined) {
    errors.add("cluster_type.typed_config", "field not present");
    return failed;
  }
  const type = typedConfig.typeUrl.startsWith("type.googleapis.com/")
    ? typedConfig.typeUrl.slice("type.googleapis.com/".length)
    : typedConfig.typeUrl;
  if (type !== AGGREGATE_CONFIG) {
    errors.add("cluster_type.typed_config.type_url", `unknown cluster_type extension: ${type}`);
    return failed;
  }
  const path = `cluster_type.typed_config.value[${AGGREGATE_CONFIG}]`;
  let clusters: string[];
  try {
    clusters = [...readView(ClusterConfigViewReader, typedConfig.value).clusters];
  } catch {
    errors.add(path, "can't parse aggregate cluster config");
    return failed;
  }
  if (clusters.length === 0) errors.add(`${path}.clusters`, "must be non-empty");
  return { type: "aggregate", prioritizedClusterNames: Object.freeze(clusters) };
}

function parseDiscovery(cluster: ClusterView, errors: ValidationErrors): Discovery | undefined {
  const discovery = cluster.clusterDiscoveryType;
  if (discovery.case === "type" && discovery.value === Cluster_DiscoveryType.EDS) return parseEds(cluster, errors);
  if (discovery.case === "type" && discovery.value === Cluster_DiscoveryType.LOGICAL_DNS) {
    return parseLogicalDns(cluster, errors);
  }
  if (discovery.case === "clusterType") return parseAggregate(cluster, errors);
  errors.add("type", "unknown discovery type");
  return undefined;
}

/** A85: known entries set their switch; unknown entries and `named_metrics.` with an empty key are ignored. */
export function parseOrcaPropagation(entries: readonly string[]): OrcaSelection {
  if (entries.length === 0) return NO_PROPAGATION;
  let cpuUtilization = false;
  let memUtilization = false;
  let applicationUtilization = false;
  let allNamedMetrics = false;
  const keys = new Set<string>();
  for (const entry of entries) {
    if (entry === "cpu_utilization") {
      cpuUtilization = true;
    } else if (entry === "mem_utilization") {
      memUtilization = true;
    } else if (entry === "application_utilization") {
      applicationUtilization = true;
    } else if (entry.startsWith(NAMED_METRICS_PREFIX)) {
      const key = entry.slice(NAMED_METRICS_PREFIX.length);
      if (key === "*") allNamedMetrics = true;
      else if (key !== "") keys.add(key);
    }
  }
  return Object.freeze({
    mode: "a85",
    cpuUtilization,
    memUtilization,
    applicationUtilization,
    allNamedMetrics,
    namedMetrics: allNamedMetrics || keys.size === 0 ? EMPTY : Object.freeze([...keys].sort()),
  });
}

function percentAtMost100(value: number | undefined, path: string, errors: ValidationErrors): void {
  if (value !== undefined && value > 100) errors.add(path, "value must be <= 100");
}

function durationOr(
  duration: OutlierDetectionView["interval"],
  fallbackMs: number,
  path: string,
  errors: ValidationErrors,
): number {
  return duration === undefined ? fallbackMs : parseDurationMs(duration, path, errors);
}

/** A50: validates `outlier_detection` and fills in gRPC's defaults. */
function parseOutlierDetection(od: OutlierDetectionView, errors: ValidationErrors): OutlierDetectionConfig {
  const intervalMs = durationOr(od.interval, 10000, "outlier_detection.interval", errors);
  const baseEjectionTimeMs = durationOr(od.baseEjectionTime, 30000, "outlier_detection.base_ejection_time", errors);
  const maxEjectionTimeMs = durationOr(od.maxEjectionTime, 300000, "outlier_detection.max_ejection_time", errors);
  percentAtMost100(od.maxEjectionPercent, "outlier_detection.max_ejection_percent", errors);
  percentAtMost100(od.enforcingSuccessRate, "outlier_detection.enforcing_success_rate", errors);
  percentAtMost100(od.failurePercentageThreshold, "outlier_detection.failure_percentage_threshold", errors);
  percentAtMost100(od.enforcingFailurePercentage, "outlier_detection.enforcing_failure_percentage", errors);
  const enforcingSuccessRate = od.enforcingSuccessRate ?? 100;
  const enforcingFailurePercentage = od.enforcingFailurePercentage ?? 0;
  return Object.freeze({
    intervalMs,
    baseEjectionTimeMs,
    maxEjectionTimeMs,
    maxEjectionPercent: od.maxEjectionPercent ?? 10,
    ...(enforcingSuccessRate === 0
      ? {}
      : {
          successRateEjection: Object.freeze({
            stdevFactor: od.successRateStdevFactor ?? 1900,
            enforcementPercentage: enforcingSuccessRate,
            minimumHosts: od.successRateMinimumHosts ?? 5,
            requestVolume: od.successRateRequestVolume ?? 100,
          }),
        }),
    ...(enforcingFailurePercentage === 0
      ? {}
      : {
          failurePercentageEjection: Object.freeze({
            threshold: od.failurePercentageThreshold ?? 85,
            enforcementPercentage: enforcingFailurePercentage,
            minimumHosts: od.failurePercentageMinimumHosts ?? 5,
            requestVolume: od.failurePercentageRequestVolume ?? 50,
          }),
        }),
  });
}

function maxConcurrentRequests(cluster: ClusterView): number {
  for (const threshold of cluster.circuitBreakers?.thresholds ?? EMPTY) {
    if (threshold.priority === RoutingPriority.DEFAULT) return threshold.maxRequests ?? 1024;
  }
  return 1024;
}

function overrideHostStatuses(cluster: ClusterView): readonly HealthStatusName[] {
  const set = cluster.commonLbConfig?.overrideHostStatus;
  if (set === undefined) return DEFAULT_OVERRIDE_HOST_STATUSES;
  const statuses: HealthStatusName[] = [];
  for (const status of set.statuses) {
    const name = HEALTH_STATUS_NAMES[status];
    if (name !== undefined && USABLE_OVERRIDE_STATUSES.has(name) && !statuses.includes(name)) statuses.push(name);
  }
  return keptList(statuses);
}

function parseMetadata(cluster: ClusterView): {
  metadata: Readonly<Record<string, JsonObject>>;
  telemetryLabels: ClusterCommon["telemetryLabels"];
} {
  const filterMetadata = cluster.metadata?.filterMetadata;
  if (filterMetadata === undefined) return { metadata: EMPTY_METADATA, telemetryLabels: UNKNOWN_TELEMETRY_LABELS };
  const metadata: Record<string, JsonObject> = {};
  let any = false;
  for (const key in filterMetadata) {
    // Copied so that freezing it leaves the raw message as decoded.
    metadata[key] = deepFreezeJson(structuredClone(filterMetadata[key]!));
    any = true;
  }
  if (!any) return { metadata: EMPTY_METADATA, telemetryLabels: UNKNOWN_TELEMETRY_LABELS };
  const labels = metadata[TELEMETRY_LABELS_KEY];
  const serviceName = labels?.service_name;
  const serviceNamespace = labels?.service_namespace;
  return {
    metadata: Object.freeze(metadata),
    telemetryLabels:
      typeof serviceName !== "string" && typeof serviceNamespace !== "string"
        ? UNKNOWN_TELEMETRY_LABELS
        : Object.freeze({
            "csm.service_name": typeof serviceName === "string" ? serviceName : "unknown",
            "csm.service_namespace_name": typeof serviceNamespace === "string" ? serviceNamespace : "unknown",
          }),
  };
}

function parseCluster(
  cluster: ClusterView,
  context: DecodeContext,
  customLbPolicies: ReadonlySet<string>,
  errors: ValidationErrors,
): ClusterBody | undefined {
  const discovery = parseDiscovery(cluster, errors);
  const lbPolicy = parseLbPolicy(cluster, customLbPolicies, errors);
  const security =
    cluster.transportSocket === undefined
      ? undefined
      : parseUpstreamTls(cluster.transportSocket, context.bootstrap, errors);
  let lrsServer: XdsServerConfig | undefined;
  if (cluster.lrsServer !== undefined) {
    if (cluster.lrsServer.configSourceSpecifier.case !== "self") errors.add("lrs_server", "ConfigSource is not self");
    lrsServer = context.server;
  }
  const orcaPropagation = context.features.orcaLrsPropagation
    ? parseOrcaPropagation(cluster.lrsReportEndpointMetrics)
    : A64_PROPAGATION;
  const outlierDetection =
    cluster.outlierDetection === undefined ? undefined : parseOutlierDetection(cluster.outlierDetection, errors);
  const { metadata, telemetryLabels } = parseMetadata(cluster);
  if (discovery === undefined) return undefined;
  return {
    name: cluster.name,
    ...discovery,
    lbPolicy,
    ...(lrsServer === undefined ? {} : { lrsServer }),
    orcaPropagation,
    maxConcurrentRequests: maxConcurrentRequests(cluster),
    ...(outlierDetection === undefined ? {} : { outlierDetection }),
    ...(security === undefined ? {} : { security }),
    overrideHostStatuses: overrideHostStatuses(cluster),
    telemetryLabels,
    metadata,
  };
}

const CLUSTER: ResourceMessage<ClusterView> = {
  typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  label: "Cluster",
  reader: ClusterViewReader,
  nameOf: (view) => view.name,
};

/** CDS: a ResourceType for `envoy.config.cluster.v3.Cluster` (EDS, LOGICAL_DNS or aggregate), gRPC's rules. */
export function createClusterResourceType(options: ClusterResourceTypeOptions = {}): ResourceType<ClusterUpdate> {
  const customLbPolicies: ReadonlySet<string> = new Set(options.customLbPolicies ?? []);
  return Object.freeze({
    typeUrl: CLUSTER.typeUrl,
    typeName: "ClusterResource",
    allResourcesRequiredInSotW: true,
    usesWrapper: false,
    decode(resource: Any, context: DecodeContext): DecodeResult<ClusterUpdate> {
      return decodeResource(resource, CLUSTER, (view, errors) =>
        parseCluster(view, context, customLbPolicies, errors),
      ) as DecodeResult<ClusterUpdate>;
    },
  });
}

/** CDS with gRPC's built-in LB policies only. */
export const clusterResourceType: ResourceType<ClusterUpdate> = createClusterResourceType();
