// The outlier_detection LB policy (A50): wraps a child policy, counts each call's outcome per endpoint, and on each
// interval ejects outliers by showing the child their subchannels in TRANSIENT_FAILURE (connections are kept).
// See docs/decisions.md#policies-outlier.

import type { ClusterUpdate, OutlierDetectionConfig } from "@xdskit/xds-client";
import type {
  CallTracker,
  CompletePick,
  ConnectivityState,
  LbHelper,
  LbPolicy,
  LbPolicyFactory,
  Picker,
  PickResult,
  Subchannel,
} from "../balancer/lb-policy.js";
import { createOutlierDetector, type OutlierCallCounter } from "./outlier-detection.js";
import { durationMs } from "./wrr-weights.js";

export const OUTLIER_DETECTION_POLICY_NAME = "outlier_detection_experimental";

export interface OutlierDetectionPolicyConfig extends OutlierDetectionConfig {
  /** The child's `loadBalancingConfig` list. */
  readonly childPolicy: readonly unknown[];
}

function uint(o: Record<string, unknown>, key: string, fallback: number, max = 0xffff_ffff): number {
  const v = o[key] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max) {
    throw new Error(`outlier_detection ${key} ${JSON.stringify(v)} must be an integer in [0, ${max}]`);
  }
  return v;
}

/** Parses gRPC's `outlier_detection_experimental` JSON config (A50 field names and defaults). */
export function parseOutlierDetectionConfig(json: unknown): OutlierDetectionPolicyConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new Error("outlier_detection config must be an object");
  const o = json as Record<string, unknown>;
  const sub = (key: string) => {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "object" || Array.isArray(v)) throw new Error(`outlier_detection ${key} must be an object`);
    return v as Record<string, unknown>;
  };
  const sr = sub("successRateEjection");
  const fp = sub("failurePercentageEjection");
  const childPolicy = o.childPolicy;
  if (!Array.isArray(childPolicy)) throw new Error("outlier_detection childPolicy must be a list");
  const baseEjectionTimeMs = durationMs(o.baseEjectionTime, "baseEjectionTime", "outlier_detection") ?? 30_000;
  return Object.freeze({
    intervalMs: durationMs(o.interval, "interval", "outlier_detection") ?? 10_000,
    baseEjectionTimeMs,
    maxEjectionTimeMs:
      durationMs(o.maxEjectionTime, "maxEjectionTime", "outlier_detection") ?? Math.max(300_000, baseEjectionTimeMs),
    maxEjectionPercent: uint(o, "maxEjectionPercent", 10, 100),
    ...(sr === undefined
      ? {}
      : {
          successRateEjection: {
            stdevFactor: uint(sr, "stdevFactor", 1900),
            enforcementPercentage: uint(sr, "enforcementPercentage", 100, 100),
            minimumHosts: uint(sr, "minimumHosts", 5),
            requestVolume: uint(sr, "requestVolume", 100),
          },
        }),
    ...(fp === undefined
      ? {}
      : {
          failurePercentageEjection: {
            threshold: uint(fp, "threshold", 85, 100),
            enforcementPercentage: uint(fp, "enforcementPercentage", 100, 100),
            minimumHosts: uint(fp, "minimumHosts", 5),
            requestVolume: uint(fp, "requestVolume", 50),
          },
        }),
    childPolicy,
  });
}

export function createOutlierDetectionPolicyFactory(): LbPolicyFactory<OutlierDetectionPolicyConfig> {
  return {
    name: OUTLIER_DETECTION_POLICY_NAME,
    typeNames: [],
    parseConfig: parseOutlierDetectionConfig,
    create: (helper) => createOutlierDetectionPolicy(helper),
  };
}

/** A child's subchannel as outlier detection shows it: TRANSIENT_FAILURE while its endpoint is ejected. */
interface WrappedSubchannel extends Subchannel {
  readonly inner: Subchannel;
  setEjected(ejected: boolean): void;
}

function wrapSubchannel(inner: Subchannel, isEjected: () => boolean): WrappedSubchannel {
  const listeners = new Set<(s: ConnectivityState) => void>();
  let ejected = isEjected();
  const visible = () => (ejected ? "TRANSIENT_FAILURE" : inner.state);
  const unwatch = inner.watch(() => {
    if (!ejected) for (const l of [...listeners]) l(inner.state);
  });
  return {
    inner,
    delegate: inner,
    address: inner.address,
    endpoint: inner.endpoint,
    get state() {
      return visible();
    },
    get lastError() {
      return ejected ? new Error(`${inner.address} is ejected by outlier detection`) : inner.lastError;
    },
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    requestConnection: () => inner.requestConnection(),
    watchLoadReports: (listener) => inner.watchLoadReports?.(listener) ?? (() => {}),
    close() {
      unwatch();
      listeners.clear();
      inner.close();
    },
    setEjected(next) {
      if (next === ejected) return;
      ejected = next;
      for (const l of [...listeners]) l(visible());
    },
  };
}

function createOutlierDetectionPolicy(helper: LbHelper): LbPolicy<OutlierDetectionPolicyConfig> {
  let config: OutlierDetectionPolicyConfig | undefined;
  let detector: ReturnType<typeof createOutlierDetector> | undefined;
  let child: { policy: LbPolicy; childJson: string } | undefined;
  let timer: unknown;
  let timerStartMs: number | undefined;
  const wrapped = new Map<string, Set<WrappedSubchannel>>();
  // Complete picks of the child, each with its counting tracker, made once per child pick object.
  const counted = new WeakMap<CompletePick, CompletePick>();

  const enabled = () => config?.successRateEjection !== undefined || config?.failurePercentageEjection !== undefined;

  function countedPick(pick: CompletePick): CompletePick {
    let result = counted.get(pick);
    if (result !== undefined) return result;
    const counter: OutlierCallCounter | undefined = detector?.counter(pick.subchannel.address);
    const inner = pick.tracker;
    const tracker: CallTracker = {
      onCallStarted() {
        inner?.onCallStarted?.();
      },
      onCallEnded(info) {
        if (enabled()) {
          if (info.code === 0) counter?.recordSuccess();
          else counter?.recordFailure();
        }
        inner?.onCallEnded?.(info);
      },
    };
    const sub = pick.subchannel as Partial<WrappedSubchannel>;
    result = Object.freeze({ ...pick, subchannel: sub.inner ?? pick.subchannel, tracker });
    counted.set(pick, result);
    return result;
  }

  /** Tracks `inner` under `address` (an endpoint's first address, A61: ejection is per endpoint). */
  function track(inner: Subchannel, address: string): Subchannel {
    const sub = wrapSubchannel(inner, () => detector?.isEjected(address) ?? false);
    let set = wrapped.get(address);
    if (set === undefined) {
      set = new Set();
      wrapped.set(address, set);
    }
    set.add(sub);
    const close = sub.close;
    return Object.assign(sub, {
      close() {
        set?.delete(sub);
        close();
      },
    });
  }

  const childHelper: LbHelper = {
    ...helper,
    createSubchannel: (address, endpoint) => track(helper.createSubchannel(address, endpoint), address),
    createEndpointSubchannel: (endpoint) =>
      track(helper.createEndpointSubchannel(endpoint), endpoint.addresses[0] ?? ""),
    updateState(state, picker) {
      const wrappedPicker: Picker = {
        pick(info): PickResult {
          const r = picker.pick(info);
          return r.type === "complete" ? countedPick(r) : r;
        },
      };
      helper.updateState(state, wrappedPicker);
    },
  };

  function apply(result: { ejected: readonly string[]; unejected: readonly string[] }): void {
    for (const a of result.ejected) for (const s of wrapped.get(a) ?? []) s.setEjected(true);
    for (const a of result.unejected) for (const s of wrapped.get(a) ?? []) s.setEjected(false);
  }

  function startTimer(delayMs: number): void {
    if (timer !== undefined) helper.clock.clearTimeout(timer);
    timer = undefined;
    if (!enabled() || config === undefined) return;
    const interval = config.intervalMs;
    timer = helper.clock.setTimeout(() => {
      timerStartMs = helper.clock.now();
      if (detector !== undefined) apply(detector.tick(timerStartMs));
      startTimer(interval);
    }, delayMs);
  }

  return {
    update(update) {
      const previous = config;
      config = update.config;
      const addresses = update.endpoints.map((e) => e.addresses[0]).filter((a): a is string => a !== undefined);
      if (detector === undefined) detector = createOutlierDetector(config, helper.random);
      else apply(detector.updateConfig(config));
      detector.setEndpoints(addresses);
      // A50: the timer keeps its phase across updates; a new interval counts from the last tick.
      if (!enabled()) startTimer(0);
      else if (timerStartMs === undefined || previous === undefined) {
        timerStartMs = helper.clock.now();
        startTimer(config.intervalMs);
      } else if (previous.intervalMs !== config.intervalMs || timer === undefined) {
        startTimer(Math.max(0, timerStartMs + config.intervalMs - helper.clock.now()));
      }
      const childJson = JSON.stringify(config.childPolicy);
      if (child === undefined || child.childJson !== childJson) {
        child?.policy.close();
        const created = helper.registry.create(config.childPolicy, childHelper);
        child = { policy: created.policy, childJson };
        created.policy.update({ ...update, config: created.config });
      } else {
        child.policy.update({ ...update, config: helper.registry.select(config.childPolicy).config });
      }
    },
    exitIdle() {
      child?.policy.exitIdle();
    },
    close() {
      if (timer !== undefined) helper.clock.clearTimeout(timer);
      child?.policy.close();
      child = undefined;
    },
  };
}

/**
 * A priority's child config for `cluster` (A50): its LB policy wrapped in outlier_detection when the cluster has
 * `outlier_detection`, as it is otherwise.
 */
export function withOutlierDetection(cluster: ClusterUpdate): readonly unknown[] {
  const od = cluster.outlierDetection;
  if (od === undefined) return cluster.lbPolicy;
  const ms = (value: number) => `${value / 1000}s`;
  return [
    {
      [OUTLIER_DETECTION_POLICY_NAME]: {
        interval: ms(od.intervalMs),
        baseEjectionTime: ms(od.baseEjectionTimeMs),
        maxEjectionTime: ms(od.maxEjectionTimeMs),
        maxEjectionPercent: od.maxEjectionPercent,
        ...(od.successRateEjection === undefined ? {} : { successRateEjection: { ...od.successRateEjection } }),
        ...(od.failurePercentageEjection === undefined
          ? {}
          : { failurePercentageEjection: { ...od.failurePercentageEjection } }),
        childPolicy: cluster.lbPolicy,
      },
    },
  ];
}
