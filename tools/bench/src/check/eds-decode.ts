// One EDS resource decoded and validated by @xdskit/xds-client against protobuf-es's `fromBinary` of the same bytes
// (resource-decode.ts's eds rows), in this process, on CPU time: both warmed up, then alternated, medians compared.
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { type DecodeContext, endpointResourceType } from "@xdskit/xds-client";
import { median } from "../lib/measure.js";

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Ten localities of `count` endpoints in all, as resource-decode.ts builds them. */
function assignment(count: number) {
  const perLocality = Math.ceil(count / 10);
  const endpoints = Array.from({ length: 10 }, (_, l) => ({
    locality: { region: "us", zone: `zone-${l}` },
    loadBalancingWeight: 10,
    lbEndpoints: Array.from({ length: Math.max(0, Math.min(perLocality, count - l * perLocality)) }, (_, k) => {
      const i = l * perLocality + k;
      return {
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
      };
    }),
  }));
  return anyPack(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, { clusterName: "eds", endpoints }));
}

/** xdskit's decode + validate CPU time over `fromBinary`'s, for one resource of `count` endpoints. */
export function edsDecodeRatio(count: number, runs = 41): number {
  const any = assignment(count);
  const context = {
    server: { serverUri: "xds.example.com:443", key: "check" },
    bootstrap: {},
    features: { dataErrorHandling: true, dynamicParameters: true },
  } as unknown as DecodeContext;
  const ours: number[] = [];
  const theirs: number[] = [];
  // Several resources per sample: one of 1,000 endpoints takes well under a millisecond.
  const batch = Math.max(1, Math.round(20_000 / count));
  for (let run = 0; run < runs; run++) {
    let start = cpuMs();
    for (let b = 0; b < batch; b++) if (!endpointResourceType.decode(any, context).ok) throw new Error("EDS invalid");
    ours.push(cpuMs() - start);
    start = cpuMs();
    for (let b = 0; b < batch; b++) fromBinary(ClusterLoadAssignmentSchema, any.value);
    theirs.push(cpuMs() - start);
  }
  // The first fifth warms up both.
  const skip = Math.floor(runs / 5);
  return median(ours.slice(skip)) / median(theirs.slice(skip));
}
