import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack, StructSchema } from "@bufbuild/protobuf/wkt";
import {
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
  Cluster_RingHashLbConfig_HashFunction,
  ClusterSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import { ClusterConfigSchema } from "@xdskit/protos/envoy/extensions/clusters/aggregate/v3/cluster_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import { ClientSideWeightedRoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb";
import { LeastRequestSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/least_request/v3/least_request_pb";
import { PickFirstSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/pick_first/v3/pick_first_pb";
import {
  RingHash_HashFunction,
  RingHashSchema,
} from "@xdskit/protos/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_pb";
import { RoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/round_robin/v3/round_robin_pb";
import { WrrLocalitySchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb";
import { UpstreamTlsContextSchema } from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";
import { describe, expect, it } from "vitest";
import { type ClusterUpdate, clusterResourceType, createClusterResourceType } from "../../src/resources/index.js";
import {
  context,
  contextWith,
  decodeWith,
  expectError,
  expectOk,
  type Init,
  isDeeplyFrozen,
  pack,
  server,
} from "./context.js";
import { typedStruct } from "./typed-struct.js";

type ClusterInit = Init<typeof ClusterSchema>;

const ads = { configSourceSpecifier: { case: "ads", value: {} } } as const;

function eds(extra: ClusterInit = {}): ClusterInit {
  return {
    name: "cluster-a",
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: { edsConfig: ads, serviceName: "service-a" },
    ...extra,
  };
}

function logicalDns(socketAddress: Record<string, unknown>, extra: ClusterInit = {}): ClusterInit {
  return {
    name: "dns-cluster",
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
    loadAssignment: {
      endpoints: [
        {
          lbEndpoints: [
            {
              hostIdentifier: {
                case: "endpoint",
                value: { address: { address: { case: "socketAddress", value: socketAddress } } },
              },
            },
          ],
        },
      ],
    },
    ...extra,
  };
}

function aggregate(clusters: string[]): ClusterInit {
  return {
    name: "agg",
    clusterDiscoveryType: {
      case: "clusterType",
      value: { name: "envoy.clusters.aggregate", typedConfig: pack(ClusterConfigSchema, { clusters }) },
    },
  };
}

function policies(...configs: ReturnType<typeof pack>[]): ClusterInit {
  return eds({
    loadBalancingPolicy: {
      policies: configs.map((typedConfig) => ({ typedExtensionConfig: { name: "p", typedConfig } })),
    },
  });
}

function decode(init: ClusterInit, ctx = context) {
  return decodeWith(clusterResourceType, ClusterSchema, init, ctx);
}

function tls(init: Init<typeof UpstreamTlsContextSchema>): ClusterInit {
  return eds({
    transportSocket: {
      name: "envoy.transport_sockets.tls",
      configType: { case: "typedConfig", value: pack(UpstreamTlsContextSchema, init) },
    },
  });
}

describe("clusterResourceType", () => {
  it("is CDS: a SotW type named ClusterResource", () => {
    expect(clusterResourceType.typeUrl).toBe("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    expect(clusterResourceType.typeName).toBe("ClusterResource");
    expect(clusterResourceType.allResourcesRequiredInSotW).toBe(true);
  });

  it("decodes an EDS cluster with gRPC's defaults, frozen, with the raw message non-enumerable", () => {
    const result = decode(eds());
    expect(result.ok && result.name).toBe("cluster-a");
    const update = expectOk(result);
    expect(update).toEqual({
      name: "cluster-a",
      type: "eds",
      edsServiceName: "service-a",
      lbPolicy: [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }],
      orcaPropagation: {
        mode: "a85",
        cpuUtilization: false,
        memUtilization: false,
        applicationUtilization: false,
        allNamedMetrics: false,
        namedMetrics: [],
      },
      maxConcurrentRequests: 1024,
      overrideHostStatuses: ["UNKNOWN", "HEALTHY"],
      telemetryLabels: { "csm.service_name": "unknown", "csm.service_namespace_name": "unknown" },
      metadata: {},
    });
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.keys(update)).not.toContain("raw");
    expect(update.raw.name).toBe("cluster-a");
    expect(update.raw.edsClusterConfig?.serviceName).toBe("service-a");
  });

  describe("accepts each cluster shape gRPC accepts", () => {
    const cases: [string, ClusterInit, Partial<ClusterUpdate>][] = [
      [
        "EDS with a self config source and no service name",
        eds({ edsClusterConfig: { edsConfig: { configSourceSpecifier: { case: "self", value: {} } } } }),
        { type: "eds", edsServiceName: "" },
      ],
      [
        "EDS with an xdstp name and a service name (A47)",
        eds({ name: "xdstp://authority/envoy.config.cluster.v3.Cluster/a" }),
        { type: "eds", edsServiceName: "service-a" },
      ],
      [
        "LOGICAL_DNS with one host and port",
        logicalDns({ address: "dns.example.com", portSpecifier: { case: "portValue", value: 8080 } }),
        { type: "logical_dns", dnsHostname: "dns.example.com:8080" },
      ],
      [
        "LOGICAL_DNS with an IPv6 literal",
        logicalDns({ address: "::1", portSpecifier: { case: "portValue", value: 443 } }),
        { type: "logical_dns", dnsHostname: "[::1]:443" },
      ],
      [
        "aggregate with its prioritized children (A37)",
        aggregate(["a", "b"]),
        { type: "aggregate", prioritizedClusterNames: ["a", "b"] },
      ],
    ];
    it.each(cases)("%s", (_name, init, expected) => {
      expect(expectOk(decode(init))).toMatchObject(expected);
    });
  });

  describe("LB policy from the lb_policy enum", () => {
    const cases: [string, ClusterInit, unknown][] = [
      [
        "RING_HASH without config: defaults",
        eds({ lbPolicy: Cluster_LbPolicy.RING_HASH }),
        [{ ring_hash_experimental: { minRingSize: 1024, maxRingSize: 8388608 } }],
      ],
      [
        "RING_HASH with sizes (A42)",
        eds({
          lbPolicy: Cluster_LbPolicy.RING_HASH,
          lbConfig: { case: "ringHashLbConfig", value: { minimumRingSize: 10n, maximumRingSize: 100n } },
        }),
        [{ ring_hash_experimental: { minRingSize: 10, maxRingSize: 100 } }],
      ],
      [
        "LEAST_REQUEST with choice_count (A48)",
        eds({
          lbPolicy: Cluster_LbPolicy.LEAST_REQUEST,
          lbConfig: { case: "leastRequestLbConfig", value: { choiceCount: 3 } },
        }),
        [{ least_request_experimental: { choiceCount: 3 } }],
      ],
      [
        "LEAST_REQUEST without config: choice_count 2",
        eds({ lbPolicy: Cluster_LbPolicy.LEAST_REQUEST }),
        [{ least_request_experimental: { choiceCount: 2 } }],
      ],
    ];
    it.each(cases)("%s", (_name, init, expected) => {
      expect(expectOk(decode(init)).lbPolicy).toEqual(expected);
    });
  });

  describe("LB policy from load_balancing_policy (A52)", () => {
    const cases: [string, ClusterInit, unknown][] = [
      [
        "the first supported policy wins; unsupported ones before it are skipped",
        policies(pack(RouterSchema, {}), pack(RingHashSchema, { minimumRingSize: 20n }), pack(RoundRobinSchema, {})),
        [{ ring_hash_experimental: { minRingSize: 20, maxRingSize: 8388608 } }],
      ],
      [
        "wrr_locality wrapping round_robin",
        policies(
          pack(WrrLocalitySchema, {
            endpointPickingPolicy: {
              policies: [{ typedExtensionConfig: { typedConfig: pack(RoundRobinSchema, {}) } }],
            },
          }),
        ),
        [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }],
      ],
      [
        "pick_first",
        policies(pack(PickFirstSchema, { shuffleAddressList: true })),
        [{ pick_first: { shuffleAddressList: true } }],
      ],
      [
        "client-side weighted round robin with durations",
        policies(
          pack(ClientSideWeightedRoundRobinSchema, {
            enableOobLoadReport: true,
            oobReportingPeriod: { seconds: 10n },
            blackoutPeriod: { seconds: 1n, nanos: 500000000 },
            errorUtilizationPenalty: 1.5,
          }),
        ),
        [
          {
            weighted_round_robin: {
              enableOobLoadReport: true,
              oobReportingPeriod: "10s",
              blackoutPeriod: "1.5s",
              errorUtilizationPenalty: 1.5,
            },
          },
        ],
      ],
      [
        "least_request",
        policies(pack(LeastRequestSchema, { choiceCount: 4 })),
        [{ least_request_experimental: { choiceCount: 4 } }],
      ],
      [
        "ring_hash with DEFAULT_HASH",
        policies(pack(RingHashSchema, { hashFunction: RingHash_HashFunction.DEFAULT_HASH, maximumRingSize: 4096n })),
        [{ ring_hash_experimental: { minRingSize: 1024, maxRingSize: 4096 } }],
      ],
      [
        "load_balancing_policy overrides the lb_policy enum",
        { ...policies(pack(PickFirstSchema, {})), lbPolicy: Cluster_LbPolicy.MAGLEV },
        [{ pick_first: { shuffleAddressList: false } }],
      ],
    ];
    it.each(cases)("%s", (_name, init, expected) => {
      expect(expectOk(decode(init)).lbPolicy).toEqual(expected);
    });

    it("accepts a custom TypedStruct policy only when the consumer registered its name", () => {
      const init = policies(
        typedStruct("type.googleapis.com/test.MyPolicy", { foo: "bar", n: 2 }),
        pack(RoundRobinSchema, {}),
      );
      expect(expectOk(decode(init)).lbPolicy).toEqual([{ round_robin: {} }]);
      const custom = createClusterResourceType({ customLbPolicies: ["test.MyPolicy"] });
      const update = expectOk(decodeWith(custom, ClusterSchema, init));
      expect(update.lbPolicy).toEqual([{ "test.MyPolicy": { foo: "bar", n: 2 } }]);
      expect(isDeeplyFrozen(update.lbPolicy)).toBe(true);
    });
  });

  it("lrs_server self reports to the server that sent the Cluster (A47)", () => {
    const update = expectOk(decode(eds({ lrsServer: { configSourceSpecifier: { case: "self", value: {} } } })));
    expect(update.lrsServer).toBe(context.server);
    expect(expectOk(decode(eds())).lrsServer).toBeUndefined();
  });

  describe("lrs_report_endpoint_metrics (A85)", () => {
    const cases: [string, string[], unknown][] = [
      [
        "top-level utilizations and named keys; unknown entries and an empty key ignored",
        [
          "cpu_utilization",
          "mem_utilization",
          "application_utilization",
          "named_metrics.foo",
          "named_metrics.bar",
          "named_metrics.foo",
          "eps",
          "named_metrics.",
          "utilization.x",
        ],
        {
          mode: "a85",
          cpuUtilization: true,
          memUtilization: true,
          applicationUtilization: true,
          allNamedMetrics: false,
          namedMetrics: ["bar", "foo"],
        },
      ],
      [
        "named_metrics.* selects every named metric",
        ["named_metrics.*", "named_metrics.foo"],
        {
          mode: "a85",
          cpuUtilization: false,
          memUtilization: false,
          applicationUtilization: false,
          allNamedMetrics: true,
          namedMetrics: [],
        },
      ],
      [
        "unset: nothing is propagated",
        [],
        {
          mode: "a85",
          cpuUtilization: false,
          memUtilization: false,
          applicationUtilization: false,
          allNamedMetrics: false,
          namedMetrics: [],
        },
      ],
    ];
    it.each(cases)("%s", (_name, metrics, expected) => {
      expect(expectOk(decode(eds({ lrsReportEndpointMetrics: metrics }))).orcaPropagation).toEqual(expected);
    });

    it("is not read when GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION is off: A64 mode, unlike an unset field", () => {
      const off = contextWith({ features: { orcaLrsPropagation: false } });
      const update = expectOk(decode(eds({ lrsReportEndpointMetrics: ["cpu_utilization", "named_metrics.*"] }), off));
      expect(update.orcaPropagation).toEqual({ mode: "a64" });
      const unset = expectOk(decode(eds({ lrsReportEndpointMetrics: [] })));
      expect(unset.orcaPropagation).not.toEqual(update.orcaPropagation);
      expect(Object.isFrozen(update.orcaPropagation)).toBe(true);
    });
  });

  describe("circuit breakers", () => {
    const cases: [string, ClusterInit, number][] = [
      [
        "max_requests of the first DEFAULT threshold",
        eds({
          circuitBreakers: {
            thresholds: [
              { priority: RoutingPriority.HIGH, maxRequests: 5 },
              { priority: RoutingPriority.DEFAULT, maxRequests: 7 },
              { priority: RoutingPriority.DEFAULT, maxRequests: 9 },
            ],
          },
        }),
        7,
      ],
      [
        "DEFAULT threshold without max_requests: 1024",
        eds({ circuitBreakers: { thresholds: [{ maxConnections: 3 }] } }),
        1024,
      ],
      [
        "only a HIGH threshold: 1024",
        eds({ circuitBreakers: { thresholds: [{ priority: RoutingPriority.HIGH, maxRequests: 1 }] } }),
        1024,
      ],
    ];
    it.each(cases)("%s", (_name, init, expected) => {
      expect(expectOk(decode(init)).maxConcurrentRequests).toBe(expected);
    });
  });

  describe("outlier detection (A50)", () => {
    it("fills in the defaults", () => {
      expect(expectOk(decode(eds({ outlierDetection: {} }))).outlierDetection).toEqual({
        intervalMs: 10000,
        baseEjectionTimeMs: 30000,
        maxEjectionTimeMs: 300000,
        maxEjectionPercent: 10,
        successRateEjection: { stdevFactor: 1900, enforcementPercentage: 100, minimumHosts: 5, requestVolume: 100 },
      });
    });

    it("takes every field, and enforcing_success_rate 0 disables success-rate ejection", () => {
      const update = expectOk(
        decode(
          eds({
            outlierDetection: {
              interval: { seconds: 1n, nanos: 500000000 },
              baseEjectionTime: { seconds: 2n },
              maxEjectionTime: { seconds: 3n },
              maxEjectionPercent: 50,
              enforcingSuccessRate: 0,
              successRateStdevFactor: 1,
              enforcingFailurePercentage: 20,
              failurePercentageThreshold: 60,
              failurePercentageMinimumHosts: 2,
              failurePercentageRequestVolume: 3,
            },
          }),
        ),
      );
      expect(update.outlierDetection).toEqual({
        intervalMs: 1500,
        baseEjectionTimeMs: 2000,
        maxEjectionTimeMs: 3000,
        maxEjectionPercent: 50,
        failurePercentageEjection: { threshold: 60, enforcementPercentage: 20, minimumHosts: 2, requestVolume: 3 },
      });
    });
  });

  describe("transport_socket (A29)", () => {
    it("takes the CA provider, identity and SAN matchers", () => {
      const update = expectOk(
        decode(
          tls({
            sni: "backend.example.com",
            commonTlsContext: {
              tlsCertificateProviderInstance: { instanceName: "id_provider", certificateName: "id" },
              validationContextType: {
                case: "validationContext",
                value: {
                  caCertificateProviderInstance: { instanceName: "ca_provider", certificateName: "root" },
                  matchSubjectAltNames: [
                    { matchPattern: { case: "exact", value: "spiffe://a" } },
                    { matchPattern: { case: "prefix", value: "spiffe://" }, ignoreCase: true },
                  ],
                },
              },
            },
          }),
        ),
      );
      expect(update.security).toEqual({
        caCertificates: { type: "certificate_provider", instanceName: "ca_provider", certificateName: "root" },
        identityCertificate: { instanceName: "id_provider", certificateName: "id" },
        matchSubjectAltNames: [
          { type: "exact", value: "spiffe://a", ignoreCase: false },
          { type: "prefix", value: "spiffe://", ignoreCase: true },
        ],
        sni: "backend.example.com",
      });
    });

    it("accepts system root certs and the deprecated combined validation context provider", () => {
      const system = expectOk(
        decode(
          tls({
            commonTlsContext: { validationContextType: { case: "validationContext", value: { systemRootCerts: {} } } },
          }),
        ),
      );
      expect(system.security?.caCertificates).toEqual({ type: "system_root_certs" });
      const combined = expectOk(
        decode(
          tls({
            commonTlsContext: {
              validationContextType: {
                case: "combinedValidationContext",
                value: {
                  defaultValidationContext: {},
                  validationContextCertificateProviderInstance: { instanceName: "ca_provider", certificateName: "r" },
                },
              },
            },
          }),
        ),
      );
      expect(combined.security?.caCertificates).toEqual({
        type: "certificate_provider",
        instanceName: "ca_provider",
        certificateName: "r",
      });
      expect(expectOk(decode(eds())).security).toBeUndefined();
    });

    it("reads the legacy validation-context provider instance; trusted_ca or typed SANs beside the supported forms are ignored", () => {
      const legacy = expectOk(
        decode(
          tls({
            commonTlsContext: {
              validationContextType: {
                case: "validationContextCertificateProviderInstance",
                value: { instanceName: "ca_provider", certificateName: "legacy" },
              },
            },
          }),
        ),
      );
      expect(legacy.security?.caCertificates).toEqual({
        type: "certificate_provider",
        instanceName: "ca_provider",
        certificateName: "legacy",
      });
      const both = expectOk(
        decode(
          tls({
            commonTlsContext: {
              validationContextType: {
                case: "validationContext",
                value: {
                  caCertificateProviderInstance: { instanceName: "ca_provider" },
                  trustedCa: {},
                  matchSubjectAltNames: [{ matchPattern: { case: "exact", value: "a" } }],
                  matchTypedSubjectAltNames: [{ sanType: 2 }],
                },
              },
            },
          }),
        ),
      );
      expect(both.security?.matchSubjectAltNames).toEqual([{ type: "exact", value: "a", ignoreCase: false }]);
    });
  });

  it("reads metadata, telemetry labels and override host statuses", () => {
    const update = expectOk(
      decode(
        eds({
          metadata: {
            filterMetadata: {
              "com.google.csm.telemetry_labels": { service_name: "svc", service_namespace: "ns", other: 1 },
              "envoy.lb": { hash_key: "k" },
            },
          },
          commonLbConfig: {
            overrideHostStatus: {
              statuses: [HealthStatus.DRAINING, HealthStatus.UNHEALTHY, HealthStatus.HEALTHY, HealthStatus.DRAINING],
            },
          },
        }),
      ),
    );
    expect(update.telemetryLabels).toEqual({ "csm.service_name": "svc", "csm.service_namespace_name": "ns" });
    expect(update.metadata).toEqual({
      "com.google.csm.telemetry_labels": { service_name: "svc", service_namespace: "ns", other: 1 },
      "envoy.lb": { hash_key: "k" },
    });
    expect(update.overrideHostStatuses).toEqual(["DRAINING", "HEALTHY"]);
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.isFrozen(update.raw.metadata?.filterMetadata["envoy.lb"])).toBe(false);
  });

  describe("rejects with gRPC's rules, naming the field", () => {
    const cases: [string, ClusterInit, string][] = [
      ["STATIC discovery type", { name: "x" }, "type: unknown discovery type"],
      [
        "EDS without eds_cluster_config",
        { name: "x", clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS } },
        "eds_cluster_config: field not present",
      ],
      [
        "EDS without eds_config",
        eds({ edsClusterConfig: { serviceName: "s" } }),
        "eds_cluster_config.eds_config: field not present",
      ],
      [
        "EDS with an api_config_source",
        eds({ edsClusterConfig: { edsConfig: { configSourceSpecifier: { case: "apiConfigSource", value: {} } } } }),
        "eds_cluster_config.eds_config: ConfigSource is not ads or self",
      ],
      [
        "xdstp EDS cluster without service_name (A47)",
        eds({ name: "xdstp://a/envoy.config.cluster.v3.Cluster/x", edsClusterConfig: { edsConfig: ads } }),
        "eds_cluster_config.service_name: must be set if Cluster resource has an xdstp name",
      ],
      [
        "LOGICAL_DNS without load_assignment",
        { name: "x", clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS } },
        "load_assignment: field not present for LOGICAL_DNS cluster",
      ],
      [
        "LOGICAL_DNS with two localities",
        {
          name: "x",
          clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
          loadAssignment: { endpoints: [{}, {}] },
        },
        "load_assignment.endpoints: must contain exactly one locality for LOGICAL_DNS cluster, found 2",
      ],
      [
        "LOGICAL_DNS with no endpoint",
        {
          name: "x",
          clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
          loadAssignment: { endpoints: [{}] },
        },
        "load_assignment.endpoints[0].lb_endpoints: must contain exactly one endpoint for LOGICAL_DNS cluster, found 0",
      ],
      [
        "LOGICAL_DNS with a resolver name, no host and a named port",
        logicalDns({ resolverName: "custom", portSpecifier: { case: "namedPort", value: "http" } }),
        "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.resolver_name: LOGICAL_DNS clusters must NOT have a custom resolver name set; " +
          "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address: field not present; " +
          "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: field not present",
      ],
      [
        "aggregate without typed_config",
        { name: "x", clusterDiscoveryType: { case: "clusterType", value: { name: "envoy.clusters.aggregate" } } },
        "cluster_type.typed_config: field not present",
      ],
      [
        "an unknown custom cluster type",
        { name: "x", clusterDiscoveryType: { case: "clusterType", value: { typedConfig: pack(RouterSchema, {}) } } },
        "cluster_type.typed_config.type_url: unknown cluster_type extension: envoy.extensions.filters.http.router.v3.Router",
      ],
      [
        "aggregate with no clusters",
        aggregate([]),
        "cluster_type.typed_config.value[envoy.extensions.clusters.aggregate.v3.ClusterConfig].clusters: must be non-empty",
      ],
      ["MAGLEV lb_policy", eds({ lbPolicy: Cluster_LbPolicy.MAGLEV }), "lb_policy: LB policy is not supported"],
      [
        "ring hash with minimum above maximum and a MURMUR hash",
        eds({
          lbPolicy: Cluster_LbPolicy.RING_HASH,
          lbConfig: {
            case: "ringHashLbConfig",
            value: {
              minimumRingSize: 200n,
              maximumRingSize: 100n,
              hashFunction: Cluster_RingHashLbConfig_HashFunction.MURMUR_HASH_2,
            },
          },
        }),
        "ring_hash_lb_config.minimum_ring_size: cannot be greater than maximum_ring_size; ring_hash_lb_config.hash_function: invalid hash function",
      ],
      [
        "ring hash with maximum 0 and minimum above 8M",
        eds({
          lbPolicy: Cluster_LbPolicy.RING_HASH,
          lbConfig: { case: "ringHashLbConfig", value: { minimumRingSize: 8388609n, maximumRingSize: 0n } },
        }),
        "ring_hash_lb_config.maximum_ring_size: value must be in the range [1, 8388608]; " +
          "ring_hash_lb_config.minimum_ring_size: value must be in the range [1, 8388608]; " +
          "ring_hash_lb_config.minimum_ring_size: cannot be greater than maximum_ring_size",
      ],
      [
        "least request with choice_count 1",
        eds({
          lbPolicy: Cluster_LbPolicy.LEAST_REQUEST,
          lbConfig: { case: "leastRequestLbConfig", value: { choiceCount: 1 } },
        }),
        "least_request_lb_config.choice_count: must be greater than or equal to 2",
      ],
      [
        "load_balancing_policy with no supported policy",
        policies(pack(RouterSchema, {}), typedStruct("type.googleapis.com/test.Unknown", {})),
        "load_balancing_policy: no supported load balancing policy config found",
      ],
      [
        "load_balancing_policy entry without typed_extension_config",
        eds({ loadBalancingPolicy: { policies: [{}] } }),
        "load_balancing_policy.policies[0].typed_extension_config: field not present",
      ],
      [
        "load_balancing_policy ring hash with a MURMUR hash",
        policies(pack(RingHashSchema, { hashFunction: RingHash_HashFunction.MURMUR_HASH_2 })),
        "load_balancing_policy.policies[0].typed_extension_config.typed_config.value[envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash].hash_function: unsupported value (must be XX_HASH)",
      ],
      [
        "wrr_locality without endpoint_picking_policy",
        policies(pack(WrrLocalitySchema, {})),
        "load_balancing_policy.policies[0].typed_extension_config.typed_config.value[envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality].endpoint_picking_policy: field not present",
      ],
      [
        "weighted round robin with a negative penalty and a negative duration",
        policies(
          pack(ClientSideWeightedRoundRobinSchema, { errorUtilizationPenalty: -1, blackoutPeriod: { seconds: -1n } }),
        ),
        "load_balancing_policy.policies[0].typed_extension_config.typed_config.value[envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin].blackout_period.seconds: value must be in the range [0, 315576000000]; " +
          "load_balancing_policy.policies[0].typed_extension_config.typed_config.value[envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin].error_utilization_penalty: value must be non-negative",
      ],
      ["lrs_server with ads", eds({ lrsServer: ads }), "lrs_server: ConfigSource is not self"],
      [
        "outlier detection percentages above 100 and a negative interval",
        eds({
          outlierDetection: {
            interval: { seconds: -5n },
            maxEjectionPercent: 101,
            enforcingSuccessRate: 101,
            failurePercentageThreshold: 101,
            enforcingFailurePercentage: 101,
          },
        }),
        "outlier_detection.interval.seconds: value must be in the range [0, 315576000000]; " +
          "outlier_detection.max_ejection_percent: value must be <= 100; " +
          "outlier_detection.enforcing_success_rate: value must be <= 100; " +
          "outlier_detection.failure_percentage_threshold: value must be <= 100; " +
          "outlier_detection.enforcing_failure_percentage: value must be <= 100",
      ],
      [
        "outlier detection nanos out of range",
        eds({ outlierDetection: { baseEjectionTime: { nanos: 1000000000 } } }),
        "outlier_detection.base_ejection_time.nanos: value must be in the range [0, 999999999]",
      ],
      [
        "a transport socket that is not an UpstreamTlsContext",
        eds({ transportSocket: { configType: { case: "typedConfig", value: pack(RouterSchema, {}) } } }),
        "transport_socket.typed_config.type_url: unsupported transport socket type",
      ],
      [
        "a transport socket without typed_config",
        eds({ transportSocket: { name: "tls" } }),
        "transport_socket.typed_config: field not present",
      ],
      [
        "TLS without CA certificates",
        tls({}),
        "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context: no CA certs configured",
      ],
      [
        "TLS naming certificate providers the bootstrap lacks",
        tls({
          commonTlsContext: {
            tlsCertificateProviderInstance: { instanceName: "nope" },
            validationContextType: {
              case: "validationContext",
              value: { caCertificateProviderInstance: { instanceName: "missing" } },
            },
          },
        }),
        "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context.validation_context.ca_certificate_provider_instance.instance_name: unrecognized certificate provider instance name: missing; " +
          "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context.tls_certificate_provider_instance.instance_name: unrecognized certificate provider instance name: nope",
      ],
      [
        "TLS with unsupported validation features",
        tls({
          commonTlsContext: {
            tlsParams: {},
            tlsCertificates: [{}],
            validationContextType: {
              case: "validationContext",
              value: {
                caCertificateProviderInstance: { instanceName: "ca_provider" },
                verifyCertificateSpki: ["x"],
                verifyCertificateHash: ["y"],
                requireSignedCertificateTimestamp: true,
                crl: {},
                matchSubjectAltNames: [
                  { matchPattern: { case: "safeRegex", value: { regex: "a.*" } }, ignoreCase: true },
                ],
              },
            },
          },
        }),
        [
          "validation_context.match_subject_alt_names[0].ignore_case: not supported for regex matcher",
          "validation_context.verify_certificate_spki: feature unsupported",
          "validation_context.verify_certificate_hash: feature unsupported",
          "validation_context.require_signed_certificate_timestamp: feature unsupported",
          "validation_context.crl: feature unsupported",
          "tls_certificates: feature unsupported",
          "tls_params: feature unsupported",
        ]
          .map(
            (e) =>
              `transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context.${e}`,
          )
          .join("; "),
      ],
      [
        "TLS whose only roots are trusted_ca, or only SAN matchers typed ones (refused rather than ignored)",
        tls({
          commonTlsContext: {
            validationContextType: {
              case: "validationContext",
              value: { trustedCa: {}, matchTypedSubjectAltNames: [{ sanType: 2 }] },
            },
          },
        }),
        [
          "common_tls_context.validation_context.match_typed_subject_alt_names: feature unsupported (use match_subject_alt_names)",
          "common_tls_context.validation_context.trusted_ca: feature unsupported (use ca_certificate_provider_instance)",
          "common_tls_context: no CA certs configured",
        ]
          .map(
            (e) =>
              `transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].${e}`,
          )
          .join("; "),
      ],
      [
        "TLS with only the inline certificate provider forms",
        tls({
          commonTlsContext: {
            tlsCertificateCertificateProvider: { name: "p" },
            validationContextType: { case: "validationContextCertificateProvider", value: { name: "p" } },
          },
        }),
        [
          "common_tls_context.validation_context_certificate_provider: feature unsupported (use a provider instance)",
          "common_tls_context.tls_certificate_certificate_provider: feature unsupported (use a provider instance)",
          "common_tls_context: no CA certs configured",
        ]
          .map(
            (e) =>
              `transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].${e}`,
          )
          .join("; "),
      ],
      [
        "TLS with an SDS validation context",
        tls({ commonTlsContext: { validationContextType: { case: "validationContextSdsSecretConfig", value: {} } } }),
        "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context.validation_context_sds_secret_config: feature unsupported; " +
          "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext].common_tls_context: no CA certs configured",
      ],
    ];
    it.each(cases)("%s", (_name, init, error) => {
      expectError(decode(init), error, init.name ?? "");
    });
  });

  it("collects every failure of one resource in one error, in field order", () => {
    const result = decode({
      name: "bad",
      clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.ORIGINAL_DST },
      lbPolicy: Cluster_LbPolicy.RANDOM,
      lrsServer: ads,
    });
    expectError(
      result,
      "type: unknown discovery type; lb_policy: LB policy is not supported; lrs_server: ConfigSource is not self",
      "bad",
    );
  });

  it("reports bytes that do not parse without a name, and a foreign type URL", () => {
    const broken = {
      $typeName: "google.protobuf.Any",
      typeUrl: clusterResourceType.typeUrl,
      value: new Uint8Array([0x0a, 0xff]),
    } as const;
    const result = clusterResourceType.decode(broken, context);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.name).toBeUndefined();
    expect(!result.ok && result.error).toMatch(/^can't parse Cluster resource: /);
    const foreign = anyPack(StructSchema, create(StructSchema, {}));
    expectError(
      clusterResourceType.decode(foreign, context),
      'unexpected type_url "type.googleapis.com/google.protobuf.Struct" for Cluster',
    );
  });

  it("keeps the server's config object as lrsServer, unfrozen", () => {
    const update = expectOk(decode(eds({ lrsServer: { configSourceSpecifier: { case: "self", value: {} } } })));
    expect(update.lrsServer).toEqual(server);
    expect(toBinary(ClusterSchema, update.raw).length).toBeGreaterThan(0);
  });
});
