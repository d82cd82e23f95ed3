// Property, end to end: a DPDS change never leaves a watcher without a resource it had. Random runs against
// @xdskit/control-plane over real HTTP/2 (fewer runs than the model-client property, each much slower): a listener's
// variants (env=a, env=b, env=c, and one for clients without env), DPDS moving the node between them or to none,
// variants changing and variants the node is moving away from disappearing, with random pauses between steps.
// Checked throughout: once the watcher has a resource it is told no error and no does-not-exist, and never the same
// resource twice in a row. At the end: it holds the variant DPDS names, and the server sees that subscription only.
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { createXdsClient } from "@xdskit/xds-client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDynamicParameters } from "../src/index.js";
import { eventually, subscribedOn } from "./support/e2e.js";
import { LDS, LDS_TYPE_NAME, listener, type TestListener, testListenerType } from "./support/test-types.js";

const ENVS = ["", "a", "b", "c"] as const;
type Env = (typeof ENVS)[number];
const constraintsOf = (env: Env) => (env === "" ? "!exists(env)" : `env=${env}`);

type Step =
  | { readonly kind: "dpds"; readonly env: Env; readonly pauseMs: number }
  | { readonly kind: "change"; readonly env: Env; readonly content: string; readonly pauseMs: number }
  | { readonly kind: "remove"; readonly env: Env; readonly pauseMs: number };

const pauseMs = fc.constantFrom(0, 0, 5, 30);
const env = fc.constantFrom(...ENVS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("dpds" as const), env, pauseMs }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("change" as const), env, content: fc.constantFrom("x", "y"), pauseMs }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), env, pauseMs }) },
);

let server: ManagementServer;
let run = 0;

beforeAll(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0, historyLimit: 2_000 });
});

afterAll(async () => {
  await server.close();
});

async function check(apiType: "GRPC" | "DELTA_GRPC", steps: readonly Step[]): Promise<void> {
  // Each run has its own node and listener name on the shared server.
  run += 1;
  const nodeId = `node-${run}`;
  const name = `L${run}`;
  const variants = new Map<Env, string>(ENVS.map((e) => [e, `${e || "none"}-0`]));
  server.setResources(ENVS.map((e) => ({ resource: listener(name, variants.get(e)!), constraints: constraintsOf(e) })));
  let target: Env = "a";
  server.setDynamicParameters(nodeId, { [LDS_TYPE_NAME]: "env=a" });
  const client = withDynamicParameters(
    createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
        node: { id: nodeId },
      },
      env: {},
    }),
  );
  const violations: string[] = [];
  const seen: string[] = [];
  try {
    client.watch(testListenerType, name, {
      onResourceChanged(result) {
        if (result.ok) {
          const value = (result.resource as TestListener).statPrefix;
          if (value === seen.at(-1)) violations.push(`${value} twice in a row after ${seen.join(" ")}`);
          seen.push(value);
        } else {
          if (seen.length > 0) violations.push(`${result.error.message} after ${seen.join(" ")}`);
          seen.push(`error:${result.error.kind}`);
        }
      },
      onAmbientError(error) {
        if (error.kind === "does_not_exist") violations.push(`ambient ${error.message} after ${seen.join(" ")}`);
      },
    });
    await eventually(() => expect(seen).toEqual(["a-0"]));
    for (const s of steps) {
      switch (s.kind) {
        case "dpds":
          if (!variants.has(s.env)) break;
          target = s.env;
          server.setDynamicParameters(nodeId, s.env === "" ? {} : { [LDS_TYPE_NAME]: `env=${s.env}` });
          break;
        case "change":
          if (!variants.has(s.env) || variants.get(s.env) === `${s.env || "none"}-${s.content}`) break;
          variants.set(s.env, `${s.env || "none"}-${s.content}`);
          server.setResource(listener(name, variants.get(s.env)!), { constraints: constraintsOf(s.env) });
          break;
        case "remove":
          if (s.env === target || !variants.has(s.env)) break;
          variants.delete(s.env);
          server.removeResource(LDS, name, constraintsOf(s.env));
          break;
      }
      if (s.pauseMs > 0) await new Promise((r) => setTimeout(r, s.pauseMs));
      expect(violations).toEqual([]);
    }
    const label = target === "" ? name : `${name}{env=${target}}`;
    await eventually(() => {
      expect(seen.at(-1)).toBe(variants.get(target));
      expect(subscribedOn(server, LDS).filter((l) => l.startsWith(name))).toEqual([label]);
    });
    expect(violations).toEqual([]);
  } finally {
    await client.close();
    server.clearDynamicParameters(nodeId);
    server.removeResource(LDS, name);
  }
}

describe.each(["GRPC", "DELTA_GRPC"] as const)("a DPDS change over %s", (apiType) => {
  it("never leaves a watcher without a resource it had, nor repeats one, and ends on the variant DPDS names", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => check(apiType, steps)),
      { numRuns: 25 },
    );
  }, 120_000);
});
