// Outlier detection's ejection logic (A50): per-endpoint call counters in two buckets, the success-rate and
// failure-percentage algorithms run on each interval tick, ejection multipliers and un-ejection. The LB policy
// wrapping it reports an ejected endpoint's subchannels as TRANSIENT_FAILURE. See docs/decisions.md#policies-outlier.

import type { OutlierDetectionConfig } from "@xdskit/xds-client";

/** Per-endpoint counter the call tracker writes to; the active bucket is what calls finishing now fill. */
export interface OutlierCallCounter {
  recordSuccess(): void;
  recordFailure(): void;
}

export interface OutlierTickResult {
  readonly ejected: readonly string[];
  readonly unejected: readonly string[];
}

export interface OutlierDetector {
  /** Sets the endpoint keys (first address); new ones start with empty counters, gone ones are forgotten. */
  setEndpoints(keys: Iterable<string>): void;
  /** The counter of an endpoint, or undefined when the key is unknown. Stable for the endpoint's lifetime. */
  counter(key: string): OutlierCallCounter | undefined;
  isEjected(key: string): boolean;
  /** A new config. With neither algorithm enabled, every endpoint is un-ejected and multipliers reset (A50). */
  updateConfig(config: OutlierDetectionConfig): OutlierTickResult;
  /** The interval timer fired at `nowMs`: swap buckets, run the algorithms, un-eject whose time is up. */
  tick(nowMs: number): OutlierTickResult;
  readonly config: OutlierDetectionConfig;
}

interface Entry {
  readonly key: string;
  activeSuccesses: number;
  activeFailures: number;
  successes: number;
  failures: number;
  ejectedAtMs: number | undefined;
  multiplier: number;
  readonly counter: OutlierCallCounter;
}

/** `random` returns [0, 1); enforcement percentages draw an integer in [0, 100) from it. */
export function createOutlierDetector(
  initial: OutlierDetectionConfig,
  random: () => number = Math.random,
): OutlierDetector {
  let config = initial;
  const entries = new Map<string, Entry>();
  let ejectedCount = 0;

  const newEntry = (key: string): Entry => {
    const entry: Entry = {
      key,
      activeSuccesses: 0,
      activeFailures: 0,
      successes: 0,
      failures: 0,
      ejectedAtMs: undefined,
      multiplier: 0,
      counter: {
        recordSuccess: () => {
          entry.activeSuccesses++;
        },
        recordFailure: () => {
          entry.activeFailures++;
        },
      },
    };
    return entry;
  };

  /** A50: stop once the ejected share reaches max_ejection_percent, but always allow a first ejection. */
  const mayEject = () => ejectedCount === 0 || (100 * ejectedCount) / entries.size < config.maxEjectionPercent;

  const eject = (entry: Entry, nowMs: number, out: string[]) => {
    entry.ejectedAtMs = nowMs;
    entry.multiplier++;
    ejectedCount++;
    out.push(entry.key);
  };

  const candidates = (requestVolume: number) => {
    const list: Entry[] = [];
    for (const e of entries.values()) if (e.successes + e.failures >= requestVolume) list.push(e);
    return list;
  };

  const successRate = (nowMs: number, out: string[]) => {
    const sr = config.successRateEjection;
    if (sr === undefined) return;
    const list = candidates(sr.requestVolume);
    if (list.length === 0 || list.length < sr.minimumHosts) return;
    let sum = 0;
    for (const e of list) sum += e.successes / (e.successes + e.failures);
    const mean = sum / list.length;
    let squares = 0;
    for (const e of list) squares += (e.successes / (e.successes + e.failures) - mean) ** 2;
    const required = mean - Math.sqrt(squares / list.length) * (sr.stdevFactor / 1000);
    for (const e of list) {
      if (!mayEject()) return;
      if (e.ejectedAtMs !== undefined) continue;
      if (
        e.successes / (e.successes + e.failures) < required &&
        Math.floor(random() * 100) < sr.enforcementPercentage
      ) {
        eject(e, nowMs, out);
      }
    }
  };

  const failurePercentage = (nowMs: number, out: string[]) => {
    const fp = config.failurePercentageEjection;
    if (fp === undefined) return;
    const list = candidates(fp.requestVolume);
    if (list.length === 0 || list.length < fp.minimumHosts) return;
    for (const e of list) {
      if (!mayEject()) return;
      if (e.ejectedAtMs !== undefined) continue;
      if (
        (100 * e.failures) / (e.successes + e.failures) > fp.threshold &&
        Math.floor(random() * 100) < fp.enforcementPercentage
      ) {
        eject(e, nowMs, out);
      }
    }
  };

  const uneject = (entry: Entry, out: string[]) => {
    entry.ejectedAtMs = undefined;
    ejectedCount--;
    out.push(entry.key);
  };

  return {
    get config() {
      return config;
    },
    setEndpoints(keys) {
      const wanted = new Set(keys);
      for (const [key, entry] of entries) {
        if (wanted.has(key)) continue;
        if (entry.ejectedAtMs !== undefined) ejectedCount--;
        entries.delete(key);
      }
      for (const key of wanted) if (!entries.has(key)) entries.set(key, newEntry(key));
    },
    counter: (key) => entries.get(key)?.counter,
    isEjected: (key) => entries.get(key)?.ejectedAtMs !== undefined,
    updateConfig(next) {
      config = next;
      const unejected: string[] = [];
      if (next.successRateEjection === undefined && next.failurePercentageEjection === undefined) {
        for (const e of entries.values()) {
          if (e.ejectedAtMs !== undefined) uneject(e, unejected);
          e.multiplier = 0;
          e.activeSuccesses = e.activeFailures = e.successes = e.failures = 0;
        }
      }
      return { ejected: [], unejected };
    },
    tick(nowMs) {
      for (const e of entries.values()) {
        e.successes = e.activeSuccesses;
        e.failures = e.activeFailures;
        e.activeSuccesses = 0;
        e.activeFailures = 0;
      }
      const ejected: string[] = [];
      const unejected: string[] = [];
      successRate(nowMs, ejected);
      failurePercentage(nowMs, ejected);
      const maxEjectionMs = Math.max(config.baseEjectionTimeMs, config.maxEjectionTimeMs);
      for (const e of entries.values()) {
        if (e.ejectedAtMs === undefined) {
          if (e.multiplier > 0) e.multiplier--;
        } else if (nowMs >= e.ejectedAtMs + Math.min(config.baseEjectionTimeMs * e.multiplier, maxEjectionMs)) {
          uneject(e, unejected);
        }
      }
      return { ejected, unejected };
    },
  };
}
