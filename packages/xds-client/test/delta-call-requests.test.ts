// What a delta ADS call tells the server: each request built from what changed in the subscriptions since the
// request before (delta-call.ts) says exactly what comparing the whole lists says, whatever the sequence of lists and
// ACKs; an ACK or NACK carries no subscription change (the channel flushes every change as an update).

import type { DeltaDiscoveryRequest } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import type { CallHost } from "../src/calls/ads-call.js";
import { createDeltaCall } from "../src/calls/delta-call.js";
import type { CallbackQueue } from "../src/state/callback-queue.js";
import { parametersKey, ResourceState } from "../src/state/resource-state.js";
import type { DecodedResponse } from "../src/wire/decoded-response.js";

const queue = {} as CallbackQueue;
const TYPE = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

/** Entries as the cache holds them: plain names and names with parameters (the same name may have both). */
const pool: ResourceState[] = [];
for (const name of ["a", "b", "c"]) {
  for (const parameters of [{}, { env: "prod" }, { env: "test", zone: "z" }]) {
    pool.push(new ResourceState("", TYPE, name, Object.freeze(parameters), parametersKey(parameters), queue));
  }
}
// One plain name twice (two authorities served by one server): one subscription.
pool.push(new ResourceState("other", TYPE, "a", Object.freeze({}), "", queue));

const keyOf = (name: string, parameters: Readonly<Record<string, string>>) => `${name}|${parametersKey(parameters)}`;
const stepArb = fc.oneof(
  fc.shuffledSubarray(pool).map((states) => ({ states })),
  fc.constant("ack" as const),
);

/** A delta call on an in-memory stream, asking `subscriptions()` for the type's list; the requests it writes. */
function deltaCall(subscriptions: () => readonly ResourceState[]) {
  const requests: DeltaDiscoveryRequest[] = [];
  const host = {
    server: { resourceTimerIsTransientError: false },
    node: {},
    clock: { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} },
    log: { trace: () => {} },
    decode: { features: { dataErrorHandling: true } },
    connectTimeoutMs: 1_000,
    subscriptions,
    coveredVersions: () => [],
  } as unknown as CallHost;
  const stream = {
    send: (request: DeltaDiscoveryRequest) => Promise.resolve(void requests.push(request)),
    responses: { next: () => new Promise(() => {}) },
    established: undefined,
    cancel() {},
  };
  return { call: createDeltaCall(host, stream as never), requests };
}

it("sends, list after list, the subscriptions and unsubscriptions a comparison of the whole lists gives", () => {
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 12 }), (steps) => {
      let states: readonly ResourceState[] = [];
      const { call, requests } = deltaCall(() => states);
      // What the server holds after applying every request, and what the client last told it.
      const server = new Set<string>();
      let told: Set<string> | undefined;
      let nonce = 0;
      for (const step of steps) {
        const before = requests.length;
        if (step === "ack") {
          if (told === undefined) continue;
          const response = { typeUrl: TYPE, nonce: String(++nonce), errors: [] } as unknown as DecodedResponse;
          call.acknowledge(response);
          expect(requests.length).toBe(before + 1);
          const ack = requests.at(-1)!;
          expect([ack.responseNonce, ack.resourceNamesSubscribe, ack.resourceLocatorsSubscribe]).toEqual([
            String(nonce),
            [],
            [],
          ]);
          expect([ack.resourceNamesUnsubscribe, ack.resourceLocatorsUnsubscribe]).toEqual([[], []]);
          continue;
        }
        states = step.states;
        call.update(TYPE);
        const now = new Set(states.map((s) => keyOf(s.name, s.parameters)));
        const subscribe = [...now].filter((k) => !told?.has(k)).sort();
        const unsubscribe = [...(told ?? [])].filter((k) => !now.has(k)).sort();
        const first = told === undefined;
        told = now;
        if (!first && subscribe.length + unsubscribe.length === 0) {
          expect(requests.length).toBe(before);
          continue;
        }
        expect(requests.length).toBe(before + 1);
        const request = requests.at(-1)!;
        const listed = (names: string[], locators: DeltaDiscoveryRequest["resourceLocatorsSubscribe"]) =>
          [...names.map((n) => keyOf(n, {})), ...locators.map((l) => keyOf(l.name, l.dynamicParameters))].sort();
        expect(listed(request.resourceNamesSubscribe, request.resourceLocatorsSubscribe)).toEqual(subscribe);
        expect(listed(request.resourceNamesUnsubscribe, request.resourceLocatorsUnsubscribe)).toEqual(unsubscribe);
        expect(request.responseNonce).toBe("");
        for (const k of subscribe) server.add(k);
        for (const k of unsubscribe) server.delete(k);
        expect([...server].sort()).toEqual([...now].sort());
      }
      call.cancel();
    }),
    { numRuns: 500 },
  );
});

it("says in initial_resource_versions what it holds for subscriptions by name only", () => {
  // initial_resource_versions is keyed by name: a server reads it as what the subscription by name holds
  // (docs/decisions.md#serving-variants). A variant held for parameters must not pass for it.
  const held = (name: string, parameters: Record<string, string>, version: string | undefined) => {
    const state = new ResourceState("", TYPE, name, Object.freeze(parameters), parametersKey(parameters), queue);
    if (version !== undefined) {
      state.resource = { value: {}, version, bytes: "", variant: { key: "" }, lastUpdated: 0 };
    }
    return state;
  };
  const first = (states: ResourceState[]) => {
    const { call, requests } = deltaCall(() => states);
    call.update(TYPE);
    call.cancel();
    return requests[0]?.initialResourceVersions;
  };
  expect(first([held("a", {}, "1"), held("a", { env: "prod" }, "2"), held("b", {}, undefined)])).toEqual({ a: "1" });
  expect(first([held("a", {}, undefined), held("a", { env: "prod" }, "2"), held("c", { env: "prod" }, "3")])).toEqual(
    {},
  );
});
