// An endpoint's weight in client_side_weighted_round_robin (A58) from its ORCA reports, with the blackout and
// expiration periods, and the A78 reason a weight is not usable. See docs/decisions.md#policies-wrr.

export interface WrrConfig {
  readonly enableOobLoadReport: boolean;
  readonly oobReportingPeriodMs: number;
  readonly blackoutPeriodMs: number;
  readonly weightExpirationPeriodMs: number;
  /** At least 100 ms (smaller values are raised, A58). */
  readonly weightUpdatePeriodMs: number;
  readonly errorUtilizationPenalty: number;
}

export const WRR_DEFAULTS: WrrConfig = Object.freeze({
  enableOobLoadReport: false,
  oobReportingPeriodMs: 10_000,
  blackoutPeriodMs: 10_000,
  weightExpirationPeriodMs: 180_000,
  weightUpdatePeriodMs: 1_000,
  errorUtilizationPenalty: 1,
});

const MIN_WEIGHT_UPDATE_PERIOD_MS = 100;

/** The load-report fields a weight is computed from (ORCA `OrcaLoadReport`). */
export interface WrrLoadReport {
  readonly applicationUtilization: number;
  readonly cpuUtilization: number;
  readonly rpsFractional: number;
  readonly eps: number;
}

/** Why `weight` returned 0 (A78): no usable report yet or still in blackout, or the last report is too old. */
export type WeightStatus = "usable" | "not_yet_usable" | "stale";

export interface EndpointWeight {
  /** Takes a report received at `nowMs`; reports without utilization or QPS are ignored (A58). */
  onLoadReport(report: WrrLoadReport, nowMs: number, errorUtilizationPenalty: number): void;
  /** The endpoint (re)became READY: the blackout period starts again with its next report. */
  onReady(): void;
  /** The weight to schedule with at `nowMs` (0 = unknown); `status` tells why after each call. */
  weight(nowMs: number, config: WrrConfig): number;
  readonly status: WeightStatus;
}

/**
 * weight = qps / (utilization + eps / qps × penalty), utilization being application_utilization when positive,
 * else cpu_utilization. Used only once it has been reported for blackoutPeriod and while the newest report is
 * younger than weightExpirationPeriod; an expired weight restarts the blackout.
 */
export function createEndpointWeight(): EndpointWeight {
  let value = 0;
  let lastUpdatedMs: number | undefined;
  let nonEmptySinceMs: number | undefined;
  let status: WeightStatus = "not_yet_usable";
  return {
    onLoadReport(report, nowMs, penalty) {
      const utilization = report.applicationUtilization > 0 ? report.applicationUtilization : report.cpuUtilization;
      const qps = report.rpsFractional;
      if (!(utilization > 0) || !(qps > 0)) return;
      const next = qps / (utilization + (report.eps / qps) * penalty);
      if (!(next > 0) || !Number.isFinite(next)) return;
      value = next;
      lastUpdatedMs = nowMs;
      if (nonEmptySinceMs === undefined) nonEmptySinceMs = nowMs;
    },
    onReady() {
      nonEmptySinceMs = undefined;
    },
    weight(nowMs, config) {
      if (lastUpdatedMs === undefined) {
        status = "not_yet_usable";
        return 0;
      }
      if (nowMs - lastUpdatedMs >= config.weightExpirationPeriodMs) {
        nonEmptySinceMs = undefined;
        status = "stale";
        return 0;
      }
      if (
        config.blackoutPeriodMs > 0 &&
        (nonEmptySinceMs === undefined || nowMs - nonEmptySinceMs < config.blackoutPeriodMs)
      ) {
        status = "not_yet_usable";
        return 0;
      }
      status = "usable";
      return value;
    },
    get status() {
      return status;
    },
  };
}

/** A duration from gRPC's JSON form ("1.5s") or a number of milliseconds; throws naming `policy` and `field`. */
export function durationMs(value: unknown, field: string, policy = "weighted_round_robin"): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === "string") {
    const m = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(value);
    if (m !== null) return Number(m[1]) * 1000 + Number(`0.${m[2] ?? "0"}`) * 1000;
  }
  throw new Error(`${policy} ${field} ${JSON.stringify(value)} is not a duration`);
}

/** Parses the `weighted_round_robin` JSON config (gRPC's service-config form); throws naming a bad field. */
export function parseWrrConfig(json: unknown): WrrConfig {
  if (json === undefined || json === null) return WRR_DEFAULTS;
  if (typeof json !== "object" || Array.isArray(json)) throw new Error("weighted_round_robin config must be an object");
  const o = json as Record<string, unknown>;
  const penalty = o.errorUtilizationPenalty ?? WRR_DEFAULTS.errorUtilizationPenalty;
  if (typeof penalty !== "number" || !(penalty >= 0) || !Number.isFinite(penalty)) {
    throw new Error(`weighted_round_robin errorUtilizationPenalty ${JSON.stringify(penalty)} must be a number ≥ 0`);
  }
  const oob = o.enableOobLoadReport ?? false;
  if (typeof oob !== "boolean") throw new Error("weighted_round_robin enableOobLoadReport must be a boolean");
  const update = durationMs(o.weightUpdatePeriod, "weightUpdatePeriod") ?? WRR_DEFAULTS.weightUpdatePeriodMs;
  return Object.freeze({
    enableOobLoadReport: oob,
    oobReportingPeriodMs: durationMs(o.oobReportingPeriod, "oobReportingPeriod") ?? WRR_DEFAULTS.oobReportingPeriodMs,
    blackoutPeriodMs: durationMs(o.blackoutPeriod, "blackoutPeriod") ?? WRR_DEFAULTS.blackoutPeriodMs,
    weightExpirationPeriodMs:
      durationMs(o.weightExpirationPeriod, "weightExpirationPeriod") ?? WRR_DEFAULTS.weightExpirationPeriodMs,
    weightUpdatePeriodMs: Math.max(update, MIN_WEIGHT_UPDATE_PERIOD_MS),
    errorUtilizationPenalty: penalty,
  });
}
