// Backend-side ORCA recorders (A51): a per-call recorder the handler fills, and a per-server recorder for values
// that describe the whole server (sent in every per-call report unless the call sets its own, and out of band).
// Values outside A51's ranges are refused when recorded, as gRPC C-core's recorders do: the setter returns false and
// the previous value stays.
import { create } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { isFraction, isMeasurement, isNonNegative } from "./orca-ranges.js";

/** The values of one call, recorded by its handler. Each setter returns false when the value was refused. */
export interface CallMetricRecorder {
  /** [0, +inf). */
  recordCpuUtilization(value: number): boolean;
  /** [0, 1]. */
  recordMemoryUtilization(value: number): boolean;
  /** [0, +inf). */
  recordApplicationUtilization(value: number): boolean;
  /** Queries per second, `rps_fractional`: [0, +inf). */
  recordQps(value: number): boolean;
  /** Errors per second: [0, +inf). */
  recordEps(value: number): boolean;
  /** A named utilization: [0, 1]. */
  recordUtilization(name: string, value: number): boolean;
  /** A request cost (per-call only: never sent out of band). */
  recordRequestCost(name: string, value: number): boolean;
  /** An opaque named metric (what A64/A85 propagate to LRS). */
  recordNamedMetric(name: string, value: number): boolean;
}

/** The values of the whole server, for every call's report and for the out-of-band service. */
export interface ServerMetricRecorder {
  setCpuUtilization(value: number): boolean;
  setMemoryUtilization(value: number): boolean;
  setApplicationUtilization(value: number): boolean;
  setQps(value: number): boolean;
  setEps(value: number): boolean;
  setUtilization(name: string, value: number): boolean;
  /** Replaces every named utilization; refused as a whole if any value is out of range. */
  setAllUtilization(values: Readonly<Record<string, number>>): boolean;
  setNamedMetric(name: string, value: number): boolean;
  clearCpuUtilization(): void;
  clearMemoryUtilization(): void;
  clearApplicationUtilization(): void;
  clearQps(): void;
  clearEps(): void;
  clearUtilization(name: string): void;
  clearNamedMetric(name: string): void;
  /** The current values as a report (what the out-of-band service sends). */
  report(): OrcaLoadReport;
}

/** Recorded values; `undefined` is unset (a report sends unset as absent, i.e. 0). */
export interface MetricValues {
  cpu: number | undefined;
  mem: number | undefined;
  application: number | undefined;
  qps: number | undefined;
  eps: number | undefined;
  readonly utilization: Map<string, number>;
  readonly requestCost: Map<string, number>;
  readonly named: Map<string, number>;
}

function emptyValues(): MetricValues {
  return {
    cpu: undefined,
    mem: undefined,
    application: undefined,
    qps: undefined,
    eps: undefined,
    utilization: new Map(),
    requestCost: new Map(),
    named: new Map(),
  };
}

export interface CallMetricRecorderImpl extends CallMetricRecorder {
  readonly values: MetricValues;
}

export function createCallMetricRecorder(): CallMetricRecorderImpl {
  const v = emptyValues();
  const set = <K extends "cpu" | "mem" | "application" | "qps" | "eps">(
    key: K,
    valid: (x: number) => boolean,
    value: number,
  ): boolean => {
    if (!valid(value)) return false;
    v[key] = value;
    return true;
  };
  const put = (map: Map<string, number>, valid: (x: number) => boolean, name: string, value: number): boolean => {
    if (!valid(value)) return false;
    map.set(name, value);
    return true;
  };
  return {
    values: v,
    recordCpuUtilization: (value) => set("cpu", isNonNegative, value),
    recordMemoryUtilization: (value) => set("mem", isFraction, value),
    recordApplicationUtilization: (value) => set("application", isNonNegative, value),
    recordQps: (value) => set("qps", isNonNegative, value),
    recordEps: (value) => set("eps", isNonNegative, value),
    recordUtilization: (name, value) => put(v.utilization, isFraction, name, value),
    recordRequestCost: (name, value) => put(v.requestCost, isMeasurement, name, value),
    recordNamedMetric: (name, value) => put(v.named, isMeasurement, name, value),
  };
}

export interface ServerMetricRecorderImpl extends ServerMetricRecorder {
  readonly values: MetricValues;
}

export function createServerMetricRecorder(): ServerMetricRecorder {
  const call = createCallMetricRecorder();
  const v = call.values;
  const recorder: ServerMetricRecorderImpl = {
    values: v,
    setCpuUtilization: call.recordCpuUtilization,
    setMemoryUtilization: call.recordMemoryUtilization,
    setApplicationUtilization: call.recordApplicationUtilization,
    setQps: call.recordQps,
    setEps: call.recordEps,
    setUtilization: call.recordUtilization,
    setAllUtilization(values) {
      const entries = Object.entries(values);
      if (!entries.every(([, value]) => isFraction(value))) return false;
      v.utilization.clear();
      for (const [name, value] of entries) v.utilization.set(name, value);
      return true;
    },
    setNamedMetric: call.recordNamedMetric,
    clearCpuUtilization() {
      v.cpu = undefined;
    },
    clearMemoryUtilization() {
      v.mem = undefined;
    },
    clearApplicationUtilization() {
      v.application = undefined;
    },
    clearQps() {
      v.qps = undefined;
    },
    clearEps() {
      v.eps = undefined;
    },
    clearUtilization: (name) => void v.utilization.delete(name),
    clearNamedMetric: (name) => void v.named.delete(name),
    report: () => toReport(undefined, v, false),
  };
  return recorder;
}

/** The server's values of a recorder made by `createServerMetricRecorder`. */
export function serverValues(recorder: ServerMetricRecorder): MetricValues | undefined {
  return (recorder as Partial<ServerMetricRecorderImpl>).values;
}

/** One report: the server's values, each overridden by the call's when set. `withRequestCost` is false out of band. */
export function toReport(server: MetricValues | undefined, call: MetricValues, withRequestCost = true): OrcaLoadReport {
  const report = create(OrcaLoadReportSchema, {
    cpuUtilization: call.cpu ?? server?.cpu ?? 0,
    memUtilization: call.mem ?? server?.mem ?? 0,
    applicationUtilization: call.application ?? server?.application ?? 0,
    rpsFractional: call.qps ?? server?.qps ?? 0,
    eps: call.eps ?? server?.eps ?? 0,
  });
  for (const source of server === undefined ? [call] : [server, call]) {
    for (const [name, value] of source.utilization) report.utilization[name] = value;
    for (const [name, value] of source.named) report.namedMetrics[name] = value;
    if (withRequestCost) for (const [name, value] of source.requestCost) report.requestCost[name] = value;
  }
  return report;
}

/** True when nothing was recorded. */
export function isEmpty(values: MetricValues): boolean {
  return (
    values.cpu === undefined &&
    values.mem === undefined &&
    values.application === undefined &&
    values.qps === undefined &&
    values.eps === undefined &&
    values.utilization.size === 0 &&
    values.requestCost.size === 0 &&
    values.named.size === 0
  );
}
