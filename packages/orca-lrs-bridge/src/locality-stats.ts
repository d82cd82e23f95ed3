// The per-locality counters every call goes through. `callFinished` allocates nothing once a handle has seen its
// metric names: counters and sums are number fields, and a named metric gets its slot the first time its key
// appears in an interval (docs/orca-lrs.md#hot-path).
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { NamedMetricsMap } from "./named-metrics-map.js";
import type { Propagation } from "./propagation.js";

/** How a call ended: `ok` (status OK) or `error` (any other status, or no status at all). */
export type CallOutcome = "ok" | "error";

/** What a report needs from an ORCA report: the fields of `OrcaLoadReport` that A64/A85 propagate. */
export type OrcaMetrics = Pick<
  OrcaLoadReport,
  "cpuUtilization" | "memUtilization" | "applicationUtilization" | "namedMetrics"
>;

/** The load of one locality of one cluster, as one client sees it. Each handle reports until released. */
export interface LocalityStats {
  /** A call was sent to an endpoint of this locality. */
  callStarted(): void;
  /** A started call finished; `orcaReport` is its per-call ORCA report, when it carried one. */
  callFinished(outcome: CallOutcome, orcaReport?: OrcaMetrics): void;
  /**
   * The locality is gone: what this handle counted since the last report goes into the next one. Calls still in
   * flight keep the handle reporting until the last of them finished (gRPC C-core keeps a locality's stats while a
   * call refers to them); then it stops, and a call started on it later is not counted. Idempotent.
   */
  release(): void;
}

/** The sum and count of one metric over an interval. */
export interface MetricTotal {
  readonly total: number;
  readonly count: number;
}

/** A locality's figures since the previous snapshot (in-progress: the current count). */
export interface LocalitySnapshot {
  issued: number;
  succeeded: number;
  errored: number;
  inProgress: number;
  cpuUtilization: MetricTotal;
  memUtilization: MetricTotal;
  applicationUtilization: MetricTotal;
  /** By LRS metric name (`named_metrics.<key>` under A85, the raw key under A64); only counts > 0. */
  named: Map<string, MetricTotal>;
}

interface Slot {
  /** The LRS `metric_name`, built once. */
  readonly name: string;
  total: number;
  count: number;
}

const NAMED_PREFIX = "named_metrics.";

export class LocalityStatsImpl implements LocalityStats {
  issued = 0;
  succeeded = 0;
  errored = 0;
  inProgress = 0;
  cpuTotal = 0;
  cpuCount = 0;
  memTotal = 0;
  memCount = 0;
  appTotal = 0;
  appCount = 0;
  /** ORCA key -> slot. Fixed keys (`named_metrics.<key>`) keep their slot; others are pruned when idle. */
  readonly #slots = new Map<string, Slot>();
  readonly #propagation: Propagation;
  readonly #fixedKeys: readonly string[];
  /** Called once, when the handle is released and no call is in flight: the store drains it one last time. */
  readonly #onDetach: (stats: LocalityStatsImpl) => void;
  #released = false;
  #detached = false;

  constructor(propagation: Propagation, onDetach: (stats: LocalityStatsImpl) => void) {
    this.#propagation = propagation;
    this.#onDetach = onDetach;
    this.#fixedKeys = propagation.legacy || propagation.allNamedMetrics ? [] : propagation.namedMetrics;
    for (const key of this.#fixedKeys) this.#slots.set(key, { name: NAMED_PREFIX + key, total: 0, count: 0 });
  }

  callStarted(): void {
    this.issued++;
    this.inProgress++;
  }

  callFinished(outcome: CallOutcome, orcaReport?: OrcaMetrics): void {
    this.#count(outcome, orcaReport);
    if (this.#released) this.#detachWhenIdle();
  }

  #count(outcome: CallOutcome, orcaReport: OrcaMetrics | undefined): void {
    if (outcome === "ok") this.succeeded++;
    else this.errored++;
    this.inProgress--;
    if (orcaReport === undefined) return;
    const p = this.#propagation;
    const named = orcaReport.namedMetrics;
    if (p.legacy) {
      this.#addNamed(named, "", true);
      return;
    }
    // Zeros count: a report without a utilization adds (0, 1) (docs/orca-lrs.md#zero-utilizations).
    if (p.cpuUtilization) {
      this.cpuTotal += orcaReport.cpuUtilization;
      this.cpuCount++;
    }
    if (p.memUtilization) {
      this.memTotal += orcaReport.memUtilization;
      this.memCount++;
    }
    if (p.applicationUtilization) {
      this.appTotal += orcaReport.applicationUtilization;
      this.appCount++;
    }
    if (p.allNamedMetrics || this.#fixedKeys.length > 0) this.#addNamed(named, NAMED_PREFIX, p.allNamedMetrics);
  }

  /** Adds the named metrics that have a slot, or every one when `all` (creating its slot on first sight). */
  #addNamed(named: { [key: string]: number }, prefix: string, all: boolean): void {
    if (typeof named !== "object" || named === null) return;
    const entries = NamedMetricsMap.entriesOf(named);
    if (entries !== undefined) {
      for (let i = 0; i < entries.length; i += 2) {
        this.#add(entries[i] as string, entries[i + 1] as number, prefix, all);
      }
      return;
    }
    if (!all) {
      // A map from elsewhere: look up the few selected keys rather than walk every key.
      for (const key of this.#fixedKeys) {
        const value = named[key];
        if (typeof value === "number") this.#add(key, value, prefix, false);
      }
      return;
    }
    for (const key in named) {
      const value = named[key];
      if (typeof value === "number") this.#add(key, value, prefix, true);
    }
  }

  #add(key: string, value: number, prefix: string, create: boolean): void {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      if (!create) return;
      slot = { name: prefix + key, total: 0, count: 0 };
      this.#slots.set(key, slot);
    }
    slot.total += value;
    slot.count++;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#detachWhenIdle();
  }

  #detachWhenIdle(): void {
    if (this.inProgress > 0 || this.#detached) return;
    this.#detached = true;
    this.#onDetach(this);
  }

  /** Adds this handle's figures since the last call into `into` and starts a new interval. */
  drainInto(into: LocalitySnapshot): void {
    into.issued += this.issued;
    into.succeeded += this.succeeded;
    into.errored += this.errored;
    into.inProgress += this.inProgress;
    into.cpuUtilization = addTotal(into.cpuUtilization, this.cpuTotal, this.cpuCount);
    into.memUtilization = addTotal(into.memUtilization, this.memTotal, this.memCount);
    into.applicationUtilization = addTotal(into.applicationUtilization, this.appTotal, this.appCount);
    this.issued = this.succeeded = this.errored = 0;
    this.cpuTotal = this.cpuCount = this.memTotal = this.memCount = this.appTotal = this.appCount = 0;
    for (const [key, slot] of this.#slots) {
      if (slot.count > 0) {
        const previous = into.named.get(slot.name);
        into.named.set(slot.name, addTotal(previous ?? ZERO, slot.total, slot.count));
        slot.total = 0;
        slot.count = 0;
      } else if (!this.#fixedKeys.includes(key)) {
        // Idle for a whole interval: a backend's ever-changing keys must not pile up.
        this.#slots.delete(key);
      }
    }
  }
}

const ZERO: MetricTotal = Object.freeze({ total: 0, count: 0 });

function addTotal(a: MetricTotal, total: number, count: number): MetricTotal {
  return count === 0 ? a : { total: a.total + total, count: a.count + count };
}

export function emptySnapshot(): LocalitySnapshot {
  return {
    issued: 0,
    succeeded: 0,
    errored: 0,
    inProgress: 0,
    cpuUtilization: ZERO,
    memUtilization: ZERO,
    applicationUtilization: ZERO,
    named: new Map(),
  };
}

/** True when the snapshot holds nothing to report. */
export function isZeroSnapshot(s: LocalitySnapshot): boolean {
  return (
    s.issued === 0 &&
    s.succeeded === 0 &&
    s.errored === 0 &&
    s.inProgress === 0 &&
    s.cpuUtilization.count === 0 &&
    s.memUtilization.count === 0 &&
    s.applicationUtilization.count === 0 &&
    s.named.size === 0
  );
}
