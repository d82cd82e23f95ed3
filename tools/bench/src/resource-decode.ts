// Decode + validate benchmark of the CDS and EDS resource types against @grpc/grpc-js-xds, on the same bytes, and
// against protobuf-es's `fromBinary` of the same resources (decode only: what xdskit's decoders used before they read
// generated wire views, and the bar issue 24 sets, decode + validate in at most half its time).
//
// Steps: (1) the parent builds the inputs once (one CDS response of 10,000 Clusters; one ClusterLoadAssignment of
// 10,000 and one of 100,000 endpoints; one of 10,000 endpoints with a service mesh's endpoint metadata) and writes their serialized Anys to a temporary directory; (2) for each case
// and implementation it starts a fresh child process (this file with `--child`), which reads the bytes, warms up,
// times decode+validate of the whole input several times and reports the median and its peak RSS; (3) the parent
// prints one table with times, ratios and peak RSS. Times are decode+validate only (no transport, no watchers).
// Not a test: nothing here asserts on time.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { Cluster_DiscoveryType, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { clusterResourceType, type DecodeContext, endpointResourceType, type ResourceType } from "@xdskit/xds-client";
import { printTable, ratio } from "./lib/table.js";

type CaseName = "cds-10k-clusters" | "eds-10k-endpoints" | "eds-100k-endpoints" | "eds-10k-endpoints-metadata";
type Impl = "xdskit" | "grpc-js-xds" | "protobuf-es";

interface ChildResult {
  readonly medianMs: number;
  /** The median CPU time (user + system) of the same runs: what the machine's load moves least. */
  readonly medianCpuMs: number;
  readonly runs: number;
  readonly peakRssMb: number;
  readonly ok: number;
  readonly failed: number;
}

const CASES: readonly CaseName[] = [
  "cds-10k-clusters",
  "eds-10k-endpoints",
  "eds-100k-endpoints",
  "eds-10k-endpoints-metadata",
];

/** grpc-js-xds's EDS duplicate check is quadratic: its 100k case runs once, without warm-up. */
function runsFor(caseName: CaseName, impl: Impl): { warmup: number; measured: number } {
  if (impl === "grpc-js-xds" && caseName === "eds-100k-endpoints") return { warmup: 0, measured: 1 };
  if (caseName === "eds-100k-endpoints") return { warmup: 1, measured: 3 };
  return { warmup: 2, measured: 5 };
}

// ---- inputs -------------------------------------------------------------------------------------------------

function buildClusters(count: number): Any[] {
  const resources: Any[] = [];
  for (let i = 0; i < count; i++) {
    const cluster = create(ClusterSchema, {
      name: `cluster-${i}`,
      clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
      edsClusterConfig: {
        edsConfig: { configSourceSpecifier: { case: "ads", value: {} } },
        serviceName: `service-${i}`,
      },
      connectTimeout: { seconds: 5n },
      circuitBreakers: { thresholds: [{ priority: RoutingPriority.DEFAULT, maxRequests: 512 }] },
      outlierDetection: { interval: { seconds: 10n }, maxEjectionPercent: 20 },
    });
    resources.push(anyPack(ClusterSchema, cluster));
  }
  return resources;
}

/**
 * Endpoint metadata as a service mesh sends it: an `istio` filter (workload name and labels) and A76's `envoy.lb`
 * `hash_key`, which xdskit reads (the rest is walked).
 */
function meshMetadata(i: number) {
  return {
    filterMetadata: {
      istio: {
        workload: `reviews-v1-${i};default;reviews;v1;Kubernetes`,
        labels: { app: "reviews", version: "v1", "pod-template-hash": "7f9c6d8b5d" },
      },
      "envoy.lb": { hash_key: `reviews-v1-${i}` },
    },
  };
}

function buildEndpoints(count: number, localities: number, metadata = false): Any[] {
  const perLocality = Math.ceil(count / localities);
  const endpoints = [];
  for (let l = 0; l < localities; l++) {
    const lbEndpoints = [];
    for (let i = l * perLocality; i < Math.min(count, (l + 1) * perLocality); i++) {
      lbEndpoints.push({
        hostIdentifier: {
          case: "endpoint" as const,
          value: {
            address: {
              address: {
                case: "socketAddress" as const,
                value: {
                  address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
                  portSpecifier: { case: "portValue" as const, value: 8080 },
                },
              },
            },
          },
        },
        healthStatus: HealthStatus.HEALTHY,
        loadBalancingWeight: 1,
        ...(metadata ? { metadata: meshMetadata(i) } : {}),
      });
    }
    endpoints.push({ locality: { region: "us", zone: `zone-${l}` }, loadBalancingWeight: 10, lbEndpoints });
  }
  const cla = create(ClusterLoadAssignmentSchema, { clusterName: `eds-${count}`, endpoints });
  return [anyPack(ClusterLoadAssignmentSchema, cla)];
}

function buildInputs(directory: string): void {
  const inputs: Record<CaseName, Any[]> = {
    "cds-10k-clusters": buildClusters(10000),
    "eds-10k-endpoints": buildEndpoints(10000, 10),
    "eds-100k-endpoints": buildEndpoints(100000, 10),
    "eds-10k-endpoints-metadata": buildEndpoints(10000, 10, true),
  };
  for (const name of CASES) {
    // One DiscoveryResponse per case: what arrives on the wire.
    const response = create(DiscoveryResponseSchema, { resources: inputs[name], typeUrl: inputs[name][0]!.typeUrl });
    writeFileSync(join(directory, `${name}.bin`), toBinary(DiscoveryResponseSchema, response));
  }
}

// ---- child: one implementation, one case ------------------------------------------------------------------

type Decoder = (resource: Any) => boolean;

function xdskitDecoder(caseName: CaseName): Decoder {
  const server = {
    serverUri: "xds.example.com:443",
    channelCredentials: { type: "insecure" },
    serverFeatures: [],
    apiType: "GRPC",
    ignoreResourceDeletion: false,
    failOnDataErrors: false,
    resourceTimerIsTransientError: false,
    trustedXdsServer: false,
    key: "bench",
  } as const;
  const context = {
    server,
    bootstrap: {
      xdsServers: [server],
      node: { id: "bench", cluster: "bench", userAgentName: "bench", userAgentVersion: "0" },
      authorities: new Map(),
      dynamicParameters: {},
      clientDefaultListenerResourceNameTemplate: "%s",
      certificateProviders: new Map(),
    },
    features: {
      dataErrorHandling: true,
      dynamicParameters: true,
      orcaLrsPropagation: true,
      fallback: true,
      federation: true,
    },
  } satisfies DecodeContext;
  const type: ResourceType<unknown> = caseName.startsWith("cds") ? clusterResourceType : endpointResourceType;
  return (resource) => type.decode(resource, context).ok;
}

interface GrpcResourceType {
  decode(
    context: unknown,
    resource: { type_url: string; value: Buffer },
  ): { name: string; value?: object; error?: string };
}

function grpcJsXdsDecoder(caseName: CaseName): Decoder {
  const require = createRequire(import.meta.url);
  // Deep paths of the package (no exports map in 1.14.1); resolved from its package.json.
  const root = dirname(require.resolve("@grpc/grpc-js-xds/package.json"));
  const file = caseName.startsWith("cds") ? "cluster-resource-type.js" : "endpoint-resource-type.js";
  const exported = require(join(root, "build/src/xds-resource-type", file)) as Record<
    string,
    { get(): GrpcResourceType }
  >;
  const type = (caseName.startsWith("cds") ? exported.ClusterResourceType : exported.EndpointResourceType)!.get();
  const context = {
    server: { serverUri: "xds.example.com:443", channelCredentials: [{ type: "insecure" }], serverFeatures: [] },
    bootstrap: { certificateProviders: {}, xdsServers: [], node: { id: "bench" }, authorities: {} },
  };
  return (resource) => {
    const result = type.decode(context, { type_url: resource.typeUrl, value: Buffer.from(resource.value) });
    return result.error === undefined;
  };
}

/** protobuf-es's `fromBinary` of each resource's message: decoding, no validation. */
function fromBinaryDecoder(caseName: CaseName): Decoder {
  const schema = caseName.startsWith("cds") ? ClusterSchema : ClusterLoadAssignmentSchema;
  return (resource) => fromBinary(schema as DescMessage, resource.value).$typeName === schema.typeName;
}

function runChild(directory: string, caseName: CaseName, impl: Impl): void {
  const response = fromBinary(DiscoveryResponseSchema, readFileSync(join(directory, `${caseName}.bin`)));
  const resources = response.resources;
  const decoders = { xdskit: xdskitDecoder, "grpc-js-xds": grpcJsXdsDecoder, "protobuf-es": fromBinaryDecoder };
  const decode = decoders[impl](caseName);
  const { warmup, measured } = runsFor(caseName, impl);
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let ok = 0;
  let failed = 0;
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  for (let run = 0; run < warmup + measured; run++) {
    ok = 0;
    failed = 0;
    const cpuStart = cpuMs();
    const start = performance.now();
    for (const resource of resources) {
      if (decode(resource)) ok++;
      else failed++;
    }
    const elapsed = performance.now() - start;
    if (run >= warmup) {
      times.push(elapsed);
      cpuTimes.push(cpuMs() - cpuStart);
    }
  }
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  const result: ChildResult = {
    medianMs: times[Math.floor(times.length / 2)]!,
    medianCpuMs: cpuTimes[Math.floor(cpuTimes.length / 2)]!,
    runs: times.length,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    ok,
    failed,
  };
  process.stdout.write(JSON.stringify(result));
}

// ---- parent -----------------------------------------------------------------------------------------------

function main(): void {
  const args = process.argv.slice(2);
  if (args[0] === "--child") {
    runChild(args[1]!, args[2] as CaseName, args[3] as Impl);
    return;
  }
  const directory = mkdtempSync(join(tmpdir(), "xdskit-bench-"));
  try {
    buildInputs(directory);
    const self = fileURLToPath(import.meta.url);
    const rows: string[][] = [];
    // `--case <name>` runs that case alone.
    const only = args[0] === "--case" ? args[1] : undefined;
    if (only !== undefined && !CASES.includes(only as CaseName))
      throw new Error(`no case ${only}: ${CASES.join(", ")}`);
    for (const caseName of CASES) {
      if (only !== undefined && caseName !== only) continue;
      const results = {} as Record<Impl, ChildResult>;
      for (const impl of ["xdskit", "grpc-js-xds", "protobuf-es"] as const) {
        const output = execFileSync(process.execPath, [self, "--child", directory, caseName, impl], {
          encoding: "utf8",
          maxBuffer: 1 << 20,
          stdio: ["ignore", "pipe", "inherit"],
        });
        results[impl] = JSON.parse(output) as ChildResult;
      }
      const ours = results.xdskit;
      const theirs = results["grpc-js-xds"];
      const protobufEs = results["protobuf-es"];
      rows.push([
        caseName,
        `${ours.medianMs.toFixed(1)} (n=${ours.runs})`,
        `${theirs.medianMs.toFixed(1)} (n=${theirs.runs})`,
        ratio(theirs.medianMs / ours.medianMs),
        `${protobufEs.medianMs.toFixed(1)} (n=${protobufEs.runs})`,
        `${(ours.medianMs / protobufEs.medianMs).toFixed(2)}x`,
        `${(ours.medianCpuMs / protobufEs.medianCpuMs).toFixed(2)}x`,
        ours.peakRssMb.toFixed(0),
        theirs.peakRssMb.toFixed(0),
        `${ours.ok}/${ours.ok + ours.failed}`,
        `${theirs.ok}/${theirs.ok + theirs.failed}`,
      ]);
    }
    printTable(
      "decode + validate, one response (median ms of n runs; peak RSS of a process running one case)",
      [
        "case",
        "xdskit ms",
        "grpc-js-xds ms",
        "grpc-js-xds / xdskit",
        "protobuf-es fromBinary ms",
        "xdskit / fromBinary",
        "same, CPU time",
        "xdskit peak RSS MB",
        "grpc-js-xds peak RSS MB",
        "xdskit valid",
        "grpc-js-xds valid",
      ],
      rows,
    );
    process.stdout.write(`node ${process.version}, ${process.platform}/${process.arch}\n`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main();
