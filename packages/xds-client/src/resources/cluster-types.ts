// What a Cluster decodes to: its discovery (EDS, LOGICAL_DNS, aggregate), LB policy, TLS, LRS server, circuit
// breaking, outlier detection (A50), ORCA propagation (A85), metadata; and the options of the CDS resource type.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { HealthStatusName } from "./endpoint-types.js";
import type { LbPolicyConfig } from "./lb-policy.js";
import type { UpstreamTlsConfig } from "./upstream-tls.js";

/**
 * Which ORCA metrics the LRS reports of this cluster carry (docs/decisions.md#orca-propagation-modes):
 * - `mode: "a85"`: A85's reading of `lrs_report_endpoint_metrics`; unset or empty selects nothing;
 * - `mode: "a64"`: the A85 switch is off, the field is not read, and the load reporter keeps A64's behaviour (every
 *   named metric, unprefixed; no utilizations). Never the same value as an unset field under A85.
 */
export type OrcaPropagationConfig = { readonly mode: "a64" } | OrcaSelection;

/** A85: the metrics `lrs_report_endpoint_metrics` selects. */
export interface OrcaSelection {
  readonly mode: "a85";
  readonly cpuUtilization: boolean;
  readonly memUtilization: boolean;
  readonly applicationUtilization: boolean;
  /** `named_metrics.*`: every named metric (then `namedMetrics` is empty). */
  readonly allNamedMetrics: boolean;
  /** Keys of `named_metrics.<key>` entries, sorted and without duplicates. */
  readonly namedMetrics: readonly string[];
}

/** A50 outlier detection, xDS defaults applied (gRPC's `outlier_detection_experimental` config). */
export interface OutlierDetectionConfig {
  readonly intervalMs: number;
  readonly baseEjectionTimeMs: number;
  readonly maxEjectionTimeMs: number;
  readonly maxEjectionPercent: number;
  /** Absent when `enforcing_success_rate` is 0. */
  readonly successRateEjection?: {
    readonly stdevFactor: number;
    readonly enforcementPercentage: number;
    readonly minimumHosts: number;
    readonly requestVolume: number;
  };
  /** Present only when `enforcing_failure_percentage` is set and not 0. */
  readonly failurePercentageEjection?: {
    readonly threshold: number;
    readonly enforcementPercentage: number;
    readonly minimumHosts: number;
    readonly requestVolume: number;
  };
}

export interface ClusterCommon {
  readonly name: string;
  /** gRPC's `loadBalancingConfig` list (exactly one entry). */
  readonly lbPolicy: readonly LbPolicyConfig[];
  /** The server that sent the Cluster, when `lrs_server` is `self` (A47); absent: no load reporting. */
  readonly lrsServer?: XdsServerConfig;
  readonly orcaPropagation: OrcaPropagationConfig;
  /** Circuit breaking: `max_requests` of the first DEFAULT-priority threshold, 1024 when unset. */
  readonly maxConcurrentRequests: number;
  readonly outlierDetection?: OutlierDetectionConfig;
  /** A29 TLS settings from `transport_socket`; absent: plaintext (or the channel's fallback credentials). */
  readonly security?: UpstreamTlsConfig;
  /** `common_lb_config.override_host_status` (usable values only), default `["UNKNOWN", "HEALTHY"]`. */
  readonly overrideHostStatuses: readonly HealthStatusName[];
  /** CSM labels from `metadata.filter_metadata["com.google.csm.telemetry_labels"]`, `"unknown"` when unset. */
  readonly telemetryLabels: {
    readonly "csm.service_name": string;
    readonly "csm.service_namespace_name": string;
  };
  /** `metadata.filter_metadata` as JSON objects by filter name. */
  readonly metadata: Readonly<Record<string, JsonObject>>;
  /** The decoded message (non-enumerable). */
  readonly raw: Cluster;
}

export type ClusterUpdate = ClusterCommon &
  (
    | { readonly type: "eds"; readonly edsServiceName: string }
    | { readonly type: "logical_dns"; readonly dnsHostname: string }
    | { readonly type: "aggregate"; readonly prioritizedClusterNames: readonly string[] }
  );

export interface ClusterResourceTypeOptions {
  /**
   * Names of custom LB policies (given as `xds.type.v3.TypedStruct` in `load_balancing_policy`) the consumer can
   * instantiate. gRPC accepts such a policy when its LB registry knows the name; without this list none is.
   */
  readonly customLbPolicies?: Iterable<string>;
}
