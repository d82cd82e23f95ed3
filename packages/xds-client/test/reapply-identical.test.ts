// The SotW re-push fast path (cache-updates.ts `reapplyIdentical`, docs/architecture.md#the-byte-identical-skip): a
// resource an entry already holds, ACKed and clean, is not applied again; its version moves. Property: after any
// history of updates, errors, deletions and outages on an entry, taking the fast path (when it says it may) leaves the
// entry, its CSDS state and what its watchers are told exactly as applying the resource would.
//
// Steps, per case: (1) two twin entries live through the same random history (each with its own queue and watcher);
// (2) the last response offers one resource to both: the first entry applies it (`applyResource`), the second takes
// the fast path or, when it declines, applies it too; (3) the twins must not differ in any field, in what the
// watchers heard, nor in the A88 cache-state label.
import { TRUE } from "@xdskit/constraint-matcher";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scopeLogger } from "../src/observability/logger.js";
import {
  applyDeletion,
  applyResource,
  applyResourceError,
  reapplyIdentical,
  type UpdateContext,
} from "../src/protocol/cache-updates.js";
import { resolveFeatures } from "../src/shared/features.js";
import { StatusCode, XdsError } from "../src/shared/xds-error.js";
import { createCallbackQueue } from "../src/state/callback-queue.js";
import { type HeldVariant, ResourceState } from "../src/state/resource-state.js";
import type { DecodedResource } from "../src/wire/decoded-response.js";
import { server } from "./resources/context.js";
import { recordingWatcher } from "./support/recorder.js";

const UNCONSTRAINED: HeldVariant = Object.freeze({ key: "" });
const OTHER_VARIANT: HeldVariant = Object.freeze({ key: "env=prod" });
/** The same variant as another object (each response reads its own). */
const OTHER_VARIANT_AGAIN: HeldVariant = Object.freeze({ key: "env=prod" });

/** The outcomes a response may carry for the entry, shared by the twins (as the memo shares them across responses). */
const OUTCOMES: readonly DecodedResource[] = [
  resource("A", true, UNCONSTRAINED),
  resource("A", true, UNCONSTRAINED), // the same bytes decoded again: another object
  resource("B", true, UNCONSTRAINED),
  resource("A", true, OTHER_VARIANT),
  resource("A", true, OTHER_VARIANT_AGAIN),
  resource("bad", false, UNCONSTRAINED),
  // The same bytes invalid (validation depends on the server that sent them too).
  resource("A", false, UNCONSTRAINED),
];

function resource(bytes: string, ok: boolean, variant: HeldVariant): DecodedResource {
  return {
    name: "r",
    constraints: TRUE,
    variant,
    ok,
    value: ok ? Object.freeze({ bytes }) : undefined,
    detail: ok ? undefined : "invalid",
    bytes,
    version: undefined,
  };
}

type Step =
  | { readonly op: "resource"; readonly outcome: number; readonly version: string }
  | { readonly op: "error"; readonly code: StatusCode; readonly variant: HeldVariant }
  | { readonly op: "delete" }
  | { readonly op: "outage" }
  | { readonly op: "recovered" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("resource" as const),
      outcome: fc.nat(OUTCOMES.length - 1),
      version: fc.constantFrom("1", "2", "3"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("error" as const),
      code: fc.constantFrom(StatusCode.NOT_FOUND, StatusCode.UNAVAILABLE),
      variant: fc.constantFrom(UNCONSTRAINED, OTHER_VARIANT_AGAIN),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "delete" as const }) },
  { weight: 1, arbitrary: fc.constant({ op: "outage" as const }) },
  { weight: 1, arbitrary: fc.constant({ op: "recovered" as const }) },
);

const contextArb = fc.record({
  dataErrorHandling: fc.boolean(),
  failOnDataErrors: fc.boolean(),
  ignoreResourceDeletion: fc.boolean(),
});

function twin(settings: { dataErrorHandling: boolean; failOnDataErrors: boolean; ignoreResourceDeletion: boolean }) {
  let now = 1_000;
  const context: UpdateContext = {
    server: {
      ...server,
      failOnDataErrors: settings.failOnDataErrors,
      ignoreResourceDeletion: settings.ignoreResourceDeletion,
    },
    features: resolveFeatures({ dataErrorHandling: settings.dataErrorHandling }, {}),
    nodeId: "node",
    clock: { now: () => (now += 1), setTimeout: () => undefined, clearTimeout: () => {} },
    log: scopeLogger({ error() {}, warn() {}, info() {}, debug() {} }, "[test]"),
  };
  const queue = createCallbackQueue((error) => {
    throw error;
  });
  const state = new ResourceState("#old", "type.googleapis.com/T", "r", {}, "", queue);
  const watcher = recordingWatcher<unknown>();
  state.addWatcher({ watcher, active: true });
  return { context, state, watcher };
}

function run(t: ReturnType<typeof twin>, step: Step): void {
  const { context, state } = t;
  switch (step.op) {
    case "resource": {
      const d = OUTCOMES[step.outcome]!;
      applyResource(context, state, d, step.version);
      return;
    }
    case "error":
      applyResourceError(context, state, step.variant, step.code, "gone", "9");
      return;
    case "delete":
      applyDeletion(context, state, "9");
      return;
    case "outage":
      state.notifyConnectivity(new XdsError(StatusCode.UNAVAILABLE, "connection", "down"));
      return;
    case "recovered":
      state.notifyCleared();
      return;
  }
}

/** Everything observable of an entry: its fields (CSDS reads them) and its A78 cache-state label. */
function observe(state: ResourceState) {
  return {
    state: state.state,
    label: state.cacheStateLabel(),
    resource: state.resource,
    error: state.error?.message,
    errorState: state.errorState,
    lastInvalid: state.lastInvalid,
    deletionIgnored: state.deletionIgnored,
    variant: state.variant,
    settled: state.settled,
  };
}

const flush = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe("reapplyIdentical", () => {
  it("leaves an entry and its watchers as applying the re-pushed resource would", async () => {
    const seen = { fast: 0, applied: 0 };
    await fc.assert(
      fc.asyncProperty(
        contextArb,
        fc.array(stepArb, { maxLength: 8 }),
        fc.nat(OUTCOMES.length - 1),
        fc.constantFrom("1", "4"),
        async (settings, history, last, version) => {
          const a = twin(settings);
          const b = twin(settings);
          for (const step of history) {
            run(a, step);
            run(b, step);
          }
          await flush();
          a.watcher.take();
          b.watcher.take();
          const d = OUTCOMES[last]!;
          applyResource(a.context, a.state, d, version);
          if (reapplyIdentical(b.state, d, version)) seen.fast += 1;
          else {
            applyResource(b.context, b.state, d, version);
            seen.applied += 1;
          }
          await flush();
          expect(observe(b.state)).toEqual(observe(a.state));
          expect(b.watcher.take()).toEqual(a.watcher.take());
        },
      ),
      {
        numRuns: 1000,
        examples: [
          // Legacy A53 with ignore_resource_deletion: a deletion is ignored and the entry stays ACKED.
          [
            { dataErrorHandling: false, failOnDataErrors: false, ignoreResourceDeletion: true },
            [{ op: "resource", outcome: 0, version: "1" }, { op: "delete" }],
            0,
            "4",
          ],
          // A TP3 error about the same variant, read as another object, replaced by the variant's resource again.
          [
            { dataErrorHandling: true, failOnDataErrors: false, ignoreResourceDeletion: false },
            [{ op: "resource", outcome: 3, version: "1" }],
            4,
            "4",
          ],
        ],
      },
    );
    expect(seen.fast).toBeGreaterThan(0);
    expect(seen.applied).toBeGreaterThan(0);
  });
});
