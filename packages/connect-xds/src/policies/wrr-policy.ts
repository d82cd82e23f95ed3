// client_side_weighted_round_robin (A58) with the A78 metrics: every endpoint kept connected, READY ones picked by
// the static stride scheduler over weights from their ORCA reports (per call, or out of band on each endpoint's
// connection with enable_oob_load_report), weights recomputed every weight_update_period. See docs/decisions.md#policies-wrr.

import { Code, ConnectError } from "@connectrpc/connect";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { CallEndInfo, CompletePick, LbHelper, LbPolicy, LbPolicyFactory, Picker } from "../balancer/lb-policy.js";
import { failingPicker } from "../balancer/lb-policy.js";
import {
  createEndpointSubchannels,
  type EndpointEntry,
  eagerAggregateState,
  noEndpointMessage,
} from "./endpoint-subchannels.js";
import { createSequence, createStrideScheduler, type StrideScheduler } from "./wrr-scheduler.js";
import { createEndpointWeight, type EndpointWeight, parseWrrConfig, type WrrConfig } from "./wrr-weights.js";

export const WRR_POLICY_NAME = "weighted_round_robin";
export const WRR_TYPE_NAME =
  "envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin";

/** A78's instrument names. */
export const WRR_METRICS = Object.freeze({
  rrFallback: "grpc.lb.wrr.rr_fallback",
  notYetUsable: "grpc.lb.wrr.endpoint_weight_not_yet_usable",
  stale: "grpc.lb.wrr.endpoint_weight_stale",
  weights: "grpc.lb.wrr.endpoint_weights",
});

interface EndpointData {
  readonly weight: EndpointWeight;
  wasReady: boolean;
}

export function createWrrPolicyFactory(): LbPolicyFactory<WrrConfig> {
  return {
    name: WRR_POLICY_NAME,
    typeNames: [WRR_TYPE_NAME],
    parseConfig: parseWrrConfig,
    create: (helper) => createWrrPolicy(helper),
  };
}

interface WrrPicker extends Picker {
  /** Rebuilds the scheduler from the endpoints' current weights (the weight_update_period timer). */
  refresh(): void;
}

function createWrrPolicy(helper: LbHelper): LbPolicy<WrrConfig> {
  let config: WrrConfig | undefined;
  let note: string | undefined;
  let closed = false;
  let picker: WrrPicker | undefined;
  let timer: unknown;
  // A58/A51: each endpoint's out-of-band report subscription while enable_oob_load_report is on, and its period.
  const oob = new Map<EndpointEntry<EndpointData>, () => void>();
  let oobPeriodMs: number | undefined;
  // One sequence for the policy's life, started at random so clients do not move in step (A58).
  const sequence = createSequence(Math.floor(helper.random() * 0x1_0000_0000));

  const list = createEndpointSubchannels<EndpointData>(
    helper,
    () => ({ weight: createEndpointWeight(), wasReady: false }),
    (entry, state) => {
      if (state === "READY" && !entry.data.wasReady) entry.data.weight.onReady();
      entry.data.wasReady = state === "READY";
      if (state === "IDLE") entry.subchannel.requestConnection();
      publish();
    },
  );

  function publish(): void {
    if (closed || config === undefined) return;
    const entries = list.entries;
    const ready = entries.filter((e) => e.subchannel.state === "READY");
    const state = eagerAggregateState(entries.map((e) => e.subchannel.state));
    if (ready.length === 0) {
      picker = undefined;
      helper.updateState(
        state,
        state === "CONNECTING"
          ? { pick: () => ({ type: "queue" }) }
          : failingPicker(new ConnectError(noEndpointMessage("weighted_round_robin", entries, note), Code.Unavailable)),
      );
      return;
    }
    picker = createWrrPicker(ready, config, helper, sequence);
    helper.updateState(state, picker);
  }

  /** Subscribes every endpoint to its out-of-band reports when the config asks, at its period; unsubscribes the rest. */
  function syncOob(): void {
    const period = config?.enableOobLoadReport === true ? config.oobReportingPeriodMs : undefined;
    if (period !== oobPeriodMs) {
      for (const stop of oob.values()) stop();
      oob.clear();
      oobPeriodMs = period;
    }
    if (period === undefined) return;
    const current = new Set(list.entries);
    for (const [entry, stop] of oob) {
      if (current.has(entry)) continue;
      stop();
      oob.delete(entry);
    }
    for (const entry of list.entries) {
      if (oob.has(entry)) continue;
      const weight = entry.data.weight;
      const listener = {
        intervalMs: period,
        onReport: (report: OrcaLoadReport) => {
          if (config !== undefined) weight.onLoadReport(report, helper.clock.now(), config.errorUtilizationPenalty);
        },
      };
      oob.set(entry, entry.subchannel.watchLoadReports?.(listener) ?? (() => {}));
    }
  }

  function schedule(): void {
    if (closed || config === undefined) return;
    timer = helper.clock.setTimeout(() => {
      picker?.refresh();
      schedule();
    }, config.weightUpdatePeriodMs);
  }

  return {
    update(update) {
      const periodChanged = config?.weightUpdatePeriodMs !== update.config.weightUpdatePeriodMs;
      config = update.config;
      note = update.resolutionNote;
      list.update(update.endpoints);
      syncOob();
      for (const e of list.entries) if (e.subchannel.state === "IDLE") e.subchannel.requestConnection();
      publish();
      if (periodChanged) {
        if (timer !== undefined) helper.clock.clearTimeout(timer);
        schedule();
      }
    },
    exitIdle() {
      for (const e of list.entries) if (e.subchannel.state === "IDLE") e.subchannel.requestConnection();
    },
    close() {
      closed = true;
      if (timer !== undefined) helper.clock.clearTimeout(timer);
      for (const stop of oob.values()) stop();
      oob.clear();
      list.close();
    },
  };
}

function createWrrPicker(
  ready: readonly EndpointEntry<EndpointData>[],
  config: WrrConfig,
  helper: LbHelper,
  sequence: () => number,
): WrrPicker {
  const n = ready.length;
  const perCall = !config.enableOobLoadReport;
  const picks: CompletePick[] = ready.map((e) => {
    const weight = e.data.weight;
    const onCallEnded = (info: CallEndInfo) => {
      const r = info.orcaReport;
      if (r !== undefined) weight.onLoadReport(r, helper.clock.now(), config.errorUtilizationPenalty);
    };
    return Object.freeze(
      perCall
        ? { type: "complete", subchannel: e.subchannel, tracker: { onCallEnded } }
        : { type: "complete", subchannel: e.subchannel },
    );
  });
  const raw = new Float64Array(n);
  let scheduler: StrideScheduler | undefined;

  function refresh(): void {
    const now = helper.clock.now();
    for (let i = 0; i < n; i++) {
      const entry = ready[i] as EndpointEntry<EndpointData>;
      const w = entry.data.weight.weight(now, config);
      raw[i] = w;
      const labels = { "grpc.target": helper.target, "grpc.lb.locality": entry.endpoint.locality?.label ?? "" };
      const status = entry.data.weight.status;
      if (status === "not_yet_usable") helper.metrics.addCounter(WRR_METRICS.notYetUsable, 1, labels);
      else if (status === "stale") helper.metrics.addCounter(WRR_METRICS.stale, 1, labels);
      helper.metrics.recordHistogram(WRR_METRICS.weights, w, labels);
    }
    scheduler = createStrideScheduler(raw, sequence);
    if (scheduler === undefined) {
      helper.metrics.addCounter(WRR_METRICS.rrFallback, 1, {
        "grpc.target": helper.target,
        "grpc.lb.locality": ready[0]?.endpoint.locality?.label ?? "",
      });
    }
  }

  refresh();
  return {
    refresh,
    pick() {
      const index = scheduler === undefined ? sequence() % n : scheduler.pick();
      return picks[index] as CompletePick;
    },
  };
}
