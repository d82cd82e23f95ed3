// Property: a DPDS change never leaves a watcher without a resource it had. Random runs over the in-memory model
// client: the DPDS resource changes (to another variant, or to none), variants change or disappear on the server
// (never the one DPDS currently names), subscriptions are answered in any order, some first with transient errors.
// After each step: once the watcher has had a resource it is never told an error nor a does-not-exist, and never
// given the same resource twice in a row. At the end, with every subscription answered, it holds the variant the last DPDS resource names,
// through exactly one inner subscription.

import { StatusCode } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withDynamicParameters } from "../src/index.js";
import { createModelClient, type ModelClient, type ModelSubscription } from "./support/model-client.js";
import {
  CDS,
  CDS_TYPE_NAME,
  clusterType,
  DPDS,
  dpdsUpdate,
  failure,
  type Item,
  item,
  notFound,
} from "./support/model-fixtures.js";

const BOOTSTRAP = {
  xds_servers: [{ server_uri: "localhost:1", channel_creds: [{ type: "insecure" }] }],
  node: { id: "node-1" },
};
/** "" is the variant for no DPDS parameters (the DPDS resource gives none for clusters). */
const ENVS = ["", "a", "b", "c"] as const;
type Env = (typeof ENVS)[number];
const labelOf = (env: Env) => (env === "" ? "c" : `c{env=${env}}`);

type Step =
  | { readonly kind: "dpds"; readonly env: Env }
  | { readonly kind: "serve"; readonly pick: number }
  | { readonly kind: "transient"; readonly pick: number }
  | { readonly kind: "change"; readonly env: Env; readonly content: string }
  | { readonly kind: "remove"; readonly env: Env };

const env = fc.constantFrom(...ENVS);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("dpds" as const), env }),
  fc.record({ kind: fc.constant("serve" as const), pick: fc.nat(7) }),
  fc.record({ kind: fc.constant("transient" as const), pick: fc.nat(7) }),
  // Few distinct contents: two variants often hold the same resource, which must not be delivered twice.
  fc.record({ kind: fc.constant("change" as const), env, content: fc.constantFrom("x", "y", "z") }),
  fc.record({ kind: fc.constant("remove" as const), env }),
);

async function run(steps: readonly Step[]): Promise<void> {
  const model: ModelClient = createModelClient(BOOTSTRAP);
  try {
    const client = withDynamicParameters(model);
    const events: string[] = [];
    const violations: string[] = [];
    let hadResource = false;
    let lastResource: string | undefined;
    client.watch(clusterType, "c", {
      onResourceChanged(result) {
        if (result.ok) {
          const value = (result.resource as Item).value;
          if (value === lastResource) violations.push(`${value} delivered twice in a row after ${events.join(" ")}`);
          lastResource = value;
          hadResource = true;
          events.push(value);
        } else {
          if (hadResource) violations.push(`${result.error.message} after ${events.join(" ")}`);
          lastResource = undefined;
          events.push(`error:${result.error.kind}`);
        }
      },
      onAmbientError(error) {
        // A deletion of a variant the watcher is moving away from must not reach it.
        if (error.kind === "does_not_exist") violations.push(`ambient ${error.message} after ${events.join(" ")}`);
      },
    });
    // The server's variants: every one exists at first.
    const variants = new Map<Env, string>(ENVS.map((e) => [e, `${e || "default"}-0`]));
    let target: Env = "a";
    model.answer(DPDS, "dynamic-parameters", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "a" } }));
    await model.flush();

    const envOf = (sub: ModelSubscription): Env => (sub.parameters.env ?? "") as Env;
    const subscriptions = () => model.labels(CDS).map((l) => model.subscription(CDS, l)!);
    const unanswered = () => subscriptions().filter((s) => !s.result?.ok);
    const serve = (sub: ModelSubscription) => {
      const content = variants.get(envOf(sub));
      model.answer(CDS, sub.label, content === undefined ? notFound() : item(content));
    };

    for (const s of steps) {
      switch (s.kind) {
        case "dpds":
          // DPDS only names variants the server has.
          if (!variants.has(s.env)) break;
          target = s.env;
          model.answer(DPDS, "dynamic-parameters", dpdsUpdate(s.env === "" ? {} : { [CDS_TYPE_NAME]: { env: s.env } }));
          break;
        case "serve": {
          const open = unanswered();
          if (open.length > 0) serve(open[s.pick % open.length]!);
          break;
        }
        case "transient": {
          const open = unanswered();
          if (open.length > 0) {
            model.answer(CDS, open[s.pick % open.length]!.label, failure(StatusCode.UNAVAILABLE, "connection"));
          }
          break;
        }
        case "change": {
          if (!variants.has(s.env) || variants.get(s.env) === s.content) break;
          variants.set(s.env, s.content);
          const sub = model.subscription(CDS, labelOf(s.env));
          if (sub?.result?.ok) serve(sub);
          break;
        }
        case "remove": {
          if (s.env === target || !variants.has(s.env)) break;
          variants.delete(s.env);
          const sub = model.subscription(CDS, labelOf(s.env));
          if (sub?.result !== undefined) model.answer(CDS, sub.label, notFound());
          break;
        }
      }
      await model.flush();
      expect(violations).toEqual([]);
    }
    // Settle: the server answers everything still open.
    for (let i = 0; i < 10 && unanswered().length > 0; i++) {
      for (const sub of unanswered()) serve(sub);
      await model.flush();
    }
    expect(violations).toEqual([]);
    expect(model.labels(CDS)).toEqual([labelOf(target)]);
    expect(lastResource).toBe(variants.get(target));
  } finally {
    await model.close();
  }
}

describe("a DPDS change", () => {
  it("never leaves a watcher without a resource it had, nor repeats one, and ends on the variant DPDS names", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => run(steps)),
      { numRuns: 300 },
    );
  });
});
