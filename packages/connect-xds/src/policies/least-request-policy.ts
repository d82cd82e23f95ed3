// The least_request LB policy (A48): every endpoint kept connected, each call to the sampled READY endpoint with
// the fewest calls in flight. Counts live with the endpoint, so they carry over pickers and EDS updates.
// See docs/decisions.md#policies-least-request.

import { Code, ConnectError } from "@connectrpc/connect";
import {
  type CompletePick,
  failingPicker,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type Picker,
} from "../balancer/lb-policy.js";
import {
  createEndpointSubchannels,
  type EndpointEntry,
  eagerAggregateState,
  noEndpointMessage,
} from "./endpoint-subchannels.js";
import { leastRequestChoiceCount, leastRequestPick } from "./least-request.js";

export const LEAST_REQUEST_POLICY_NAME = "least_request_experimental";
export const LEAST_REQUEST_TYPE_NAME = "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest";

export interface LeastRequestConfig {
  readonly choiceCount: number;
}

interface Counter {
  outstanding: number;
}

export function createLeastRequestPolicyFactory(): LbPolicyFactory<LeastRequestConfig> {
  return {
    name: LEAST_REQUEST_POLICY_NAME,
    typeNames: [LEAST_REQUEST_TYPE_NAME],
    parseConfig(json) {
      const o = (json ?? {}) as { choiceCount?: unknown };
      if (typeof o !== "object" || Array.isArray(o)) throw new Error("least_request config must be an object");
      if (o.choiceCount !== undefined && typeof o.choiceCount !== "number") {
        throw new Error("least_request choiceCount must be a number");
      }
      return Object.freeze({ choiceCount: leastRequestChoiceCount(o.choiceCount as number | undefined) });
    },
    create: (helper) => createLeastRequestPolicy(helper),
  };
}

function createLeastRequestPolicy(helper: LbHelper): LbPolicy<LeastRequestConfig> {
  let choiceCount = 2;
  let note: string | undefined;
  let closed = false;
  const list = createEndpointSubchannels<Counter>(
    helper,
    () => ({ outstanding: 0 }),
    (entry, state) => {
      if (state === "IDLE") entry.subchannel.requestConnection();
      publish();
    },
  );

  function publish(): void {
    if (closed) return;
    const entries = list.entries;
    const ready = entries.filter((e) => e.subchannel.state === "READY");
    const state = eagerAggregateState(entries.map((e) => e.subchannel.state));
    if (ready.length > 0) helper.updateState(state, createPicker(ready, choiceCount, helper.random));
    else if (state === "CONNECTING") helper.updateState(state, { pick: () => ({ type: "queue" }) });
    else
      helper.updateState(
        state,
        failingPicker(new ConnectError(noEndpointMessage("least_request", entries, note), Code.Unavailable)),
      );
  }

  return {
    update(update) {
      choiceCount = update.config.choiceCount;
      note = update.resolutionNote;
      list.update(update.endpoints);
      for (const e of list.entries) if (e.subchannel.state === "IDLE") e.subchannel.requestConnection();
      publish();
    },
    exitIdle() {
      for (const e of list.entries) if (e.subchannel.state === "IDLE") e.subchannel.requestConnection();
    },
    close() {
      closed = true;
      list.close();
    },
  };
}

function createPicker(ready: readonly EndpointEntry<Counter>[], choiceCount: number, random: () => number): Picker {
  const counters = ready.map((e) => e.data);
  const picks: CompletePick[] = ready.map((e) => {
    const counter = e.data;
    return Object.freeze({
      type: "complete",
      subchannel: e.subchannel,
      tracker: {
        onCallStarted: () => {
          counter.outstanding++;
        },
        onCallEnded: () => {
          counter.outstanding--;
        },
      },
    });
  });
  return { pick: () => picks[leastRequestPick(counters, choiceCount, random)] as CompletePick };
}
