// A51's value ranges (docs/orca-lrs.md#range-filtering). The recorders refuse out-of-range values when they are
// recorded, as gRPC C-core's do; the parsers drop them from reports received from any peer, so a backend that
// does not check (grpc-js does not) cannot push a negative CPU figure into a load report.
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";

/** cpu_utilization, application_utilization, rps_fractional, eps: [0, +inf]. NaN is out. */
export function isNonNegative(value: number): boolean {
  return value >= 0;
}

/** mem_utilization and the values of `utilization`: [0, 1]. */
export function isFraction(value: number): boolean {
  return value >= 0 && value <= 1;
}

/** named_metrics and request_cost have no range in A51; only NaN, which no measurement is, is dropped. */
export function isMeasurement(value: number): boolean {
  return !Number.isNaN(value);
}

/** Resets out-of-range top-level values to 0 (unset) and deletes out-of-range map entries, in place. */
export function dropOutOfRange(report: OrcaLoadReport): OrcaLoadReport {
  if (!isNonNegative(report.cpuUtilization)) report.cpuUtilization = 0;
  if (!isFraction(report.memUtilization)) report.memUtilization = 0;
  if (!isNonNegative(report.applicationUtilization)) report.applicationUtilization = 0;
  if (!isNonNegative(report.rpsFractional)) report.rpsFractional = 0;
  if (!isNonNegative(report.eps)) report.eps = 0;
  dropFromMap(report.utilization, isFraction);
  dropFromMap(report.namedMetrics, isMeasurement);
  dropFromMap(report.requestCost, isMeasurement);
  return report;
}

function dropFromMap(map: { [key: string]: number }, valid: (value: number) => boolean): void {
  for (const key of Object.keys(map)) if (!valid(map[key] as number)) delete map[key];
}
