// The wrapper's state machine over the in-memory model client, step by step: which subscriptions exist on the inner
// client after each event, and exactly what the watcher is told. The same rules run over HTTP/2 in the
// end-to-end tests.
import { StatusCode } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import { withDynamicParameters } from "../src/index.js";
import { createModelClient, type ModelClient } from "./support/model-client.js";
import {
  CDS,
  CDS_TYPE_NAME,
  clusterType,
  DPDS,
  describeItem,
  dpdsUpdate,
  failure,
  type Item,
  item,
  LDS,
  LDS_TYPE_NAME,
  listenerType,
  notFound,
} from "./support/model-fixtures.js";
import { recorder } from "./support/recorder.js";

const BOOTSTRAP = {
  xds_servers: [{ server_uri: "localhost:1", channel_creds: [{ type: "insecure" }] }],
  node: { id: "node-1" },
  dynamic_parameters: { zone: "a", env: "boot" },
  authorities: { "auth.example": { dynamic_parameters: { region: "eu" } }, "plain.example": {} },
};

let model: ModelClient;

afterEach(async () => {
  await model?.close();
});

/** A wrapped model client whose DPDS resource (the default name) gives `env` for clusters. */
async function started(env = "prod", options: Parameters<typeof withDynamicParameters>[1] = {}) {
  model = createModelClient(BOOTSTRAP);
  const client = withDynamicParameters(model, options);
  model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env } }));
  await model.flush();
  return client;
}

/** A watcher of cluster c on a wrapped client, holding c-prod (its first event, taken); and the watch's cancel. */
async function holding() {
  const client = await started("prod");
  const w = recorder<Item>(describeItem);
  const cancel = client.watch(clusterType, "c", w);
  model.answer(CDS, "c{env=prod,zone=a}", item("c-prod"));
  await model.flush();
  expect(w.take()).toEqual(["resource:c-prod"]);
  return Object.assign(w, { cancel });
}

/** DPDS moves clusters from env=prod to env=canary while the watcher of c holds c-prod: the move is under way. */
async function holdingWhileMoving() {
  const w = await holding();
  await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
  expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}", "c{env=prod,zone=a}"]);
  return w;
}

let dpdsVersion = 1;

/** The next version of the DPDS resource. */
async function setDpds(byType: Parameters<typeof dpdsUpdate>[0]) {
  dpdsVersion += 1;
  model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", dpdsUpdate(byType, String(dpdsVersion)));
  await model.flush();
}

describe("subscribing", () => {
  it("waits for the DPDS resource, then subscribes with its parameters over the bootstrap's (DPDS wins per key)", async () => {
    model = createModelClient(BOOTSTRAP);
    const client = withDynamicParameters(model);
    // The DPDS resource is watched at once, under its default name, with the bootstrap's parameters.
    expect(model.labels()).toEqual(["dynamic-parameters{env=boot,zone=a}"]);
    const w = recorder<Item>(describeItem);
    client.watch(clusterType, "c", w);
    client.watch(listenerType, "l", recorder(describeItem));
    await model.flush();
    expect(model.labels(CDS)).toEqual([]);
    model.answer(
      DPDS,
      "dynamic-parameters{env=boot,zone=a}",
      dpdsUpdate({ [CDS_TYPE_NAME]: { env: "prod", version: "v2" }, "other.Type": { x: "1" } }),
    );
    await model.flush();
    expect(model.labels(CDS)).toEqual(["c{env=prod,version=v2,zone=a}"]);
    // A type the DPDS resource does not mention keeps the bootstrap's parameters.
    expect(model.labels(LDS)).toEqual(["l{env=boot,zone=a}"]);
    model.answer(CDS, "c{env=prod,version=v2,zone=a}", item("c-prod"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-prod"]);
  });

  it("uses the authority's parameters for xdstp names, and passes names it cannot place to the inner client", async () => {
    const client = await started("prod");
    client.watch(clusterType, "xdstp://auth.example/envoy.config.cluster.v3.Cluster/c", recorder(describeItem));
    client.watch(clusterType, "xdstp://plain.example/envoy.config.cluster.v3.Cluster/d", recorder(describeItem));
    client.watch(clusterType, "xdstp://unknown.example/envoy.config.cluster.v3.Cluster/e", recorder(describeItem));
    client.watch(clusterType, "xdstp:bad", recorder(describeItem));
    expect(model.labels(CDS)).toEqual([
      "xdstp://auth.example/envoy.config.cluster.v3.Cluster/c{env=prod,region=eu}",
      "xdstp://plain.example/envoy.config.cluster.v3.Cluster/d{env=prod}",
      // Unknown authority and bad name: the inner client's own parameters (and its own error).
      "xdstp://unknown.example/envoy.config.cluster.v3.Cluster/e{env=boot,zone=a}",
      "xdstp:bad{env=boot,zone=a}",
    ]);
  });

  it("merges DPDS over a watch's own parameters, which replace the bootstrap's", async () => {
    const client = await started("prod");
    client.watch(clusterType, "c", recorder(describeItem), { dynamicParameters: { env: "mine", team: "x" } });
    expect(model.labels(CDS)).toEqual(["c{env=prod,team=x}"]);
  });

  it("watches another DPDS resource per authority, or none", async () => {
    model = createModelClient(BOOTSTRAP);
    const client = withDynamicParameters(model, {
      resourceName: "dpds-main",
      authorityResourceNames: { "auth.example": "dpds-auth", "plain.example": null },
    });
    expect(model.labels(DPDS)).toEqual(["dpds-auth{env=boot,zone=a}", "dpds-main{env=boot,zone=a}"]);
    model.answer(DPDS, "dpds-main{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "main" } }));
    model.answer(DPDS, "dpds-auth{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "auth" } }));
    await model.flush();
    client.watch(clusterType, "c", recorder(describeItem));
    client.watch(clusterType, "xdstp://auth.example/envoy.config.cluster.v3.Cluster/c", recorder(describeItem));
    client.watch(clusterType, "xdstp://plain.example/envoy.config.cluster.v3.Cluster/c", recorder(describeItem));
    expect(model.labels(CDS)).toEqual([
      "c{env=main,zone=a}",
      "xdstp://auth.example/envoy.config.cluster.v3.Cluster/c{env=auth,region=eu}",
      "xdstp://plain.example/envoy.config.cluster.v3.Cluster/c",
    ]);
  });

  it("subscribes without DPDS parameters when the DPDS resource does not exist, and moves once it comes", async () => {
    model = createModelClient(BOOTSTRAP);
    const client = withDynamicParameters(model);
    const w = recorder<Item>(describeItem);
    client.watch(clusterType, "c", w);
    model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", notFound());
    await model.flush();
    expect(model.labels(CDS)).toEqual(["c{env=boot,zone=a}"]);
    model.answer(CDS, "c{env=boot,zone=a}", item("c-boot"));
    await model.flush();
    model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "prod" } }));
    await model.flush();
    expect(model.labels(CDS)).toEqual(["c{env=boot,zone=a}", "c{env=prod,zone=a}"]);
    model.answer(CDS, "c{env=prod,zone=a}", item("c-prod"));
    await model.flush();
    expect(model.labels(CDS)).toEqual(["c{env=prod,zone=a}"]);
    expect(w.take()).toEqual(["resource:c-boot", "resource:c-prod"]);
  });

  it("stops waiting after waitForDpdsMs and subscribes with the bootstrap's parameters", async () => {
    model = createModelClient(BOOTSTRAP);
    const client = withDynamicParameters(model, { waitForDpdsMs: 20 });
    client.watch(clusterType, "c", recorder(describeItem));
    expect(model.labels(CDS)).toEqual([]);
    await new Promise((r) => setTimeout(r, 40));
    expect(model.labels(CDS)).toEqual(["c{env=boot,zone=a}"]);
  });

  it("waits a waitForDpdsMs past Node's timer limit (30 days) for DPDS, instead of giving up at once", async () => {
    // Node alone fires a timer of more than 2^31-1 ms after 1 ms: the wrapper would subscribe without DPDS at once.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      model = createModelClient(BOOTSTRAP);
      const client = withDynamicParameters(model, { waitForDpdsMs: 30 * 24 * 3_600_000 });
      client.watch(clusterType, "c", recorder(describeItem));
      await new Promise((r) => setTimeout(r, 40));
      expect(model.labels(CDS)).toEqual([]);
      model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "prod" } }));
      await model.flush();
      expect(model.labels(CDS)).toEqual(["c{env=prod,zone=a}"]);
      expect(warnings.filter((warning) => warning.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("never subscribes a watch cancelled while it waited for DPDS", async () => {
    model = createModelClient(BOOTSTRAP);
    const client = withDynamicParameters(model);
    const cancel = client.watch(clusterType, "c", recorder(describeItem));
    cancel();
    model.answer(DPDS, "dynamic-parameters{env=boot,zone=a}", dpdsUpdate({ [CDS_TYPE_NAME]: { env: "prod" } }));
    await model.flush();
    expect(model.labels(CDS)).toEqual([]);
  });

  it("passes every watch through, and watches no DPDS resource, with dynamic parameters switched off", async () => {
    model = createModelClient(BOOTSTRAP, { dynamicParameters: false });
    const client = withDynamicParameters(model);
    client.watch(clusterType, "c", recorder(describeItem));
    expect(model.labels()).toEqual(["c{env=boot,zone=a}"]);
  });

  it("refuses bad options, naming them", () => {
    model = createModelClient({ xds_servers: [{ server_uri: "localhost:1", channel_creds: [{ type: "insecure" }] }] });
    expect(() => withDynamicParameters(model, { resourceName: "" })).toThrow(
      "[INVALID_ARGUMENT] withDynamicParameters: resourceName is empty",
    );
    expect(() => withDynamicParameters(model, { waitForDpdsMs: -1 })).toThrow(
      "[INVALID_ARGUMENT] withDynamicParameters: waitForDpdsMs must be a number of milliseconds, 0 or more",
    );
    expect(() => withDynamicParameters(model, { waitForDpdsMs: Number.NaN })).toThrow("waitForDpdsMs");
  });
});

describe("moving when the DPDS resource changes", () => {
  it("keeps the old subscription serving until the new one has the resource, then cancels it", async () => {
    // Steps: hold c-prod; DPDS moves clusters to env=canary; both subscriptions exist; an update of the old variant
    // still reaches the watcher; the new variant arrives: delivered once, the old subscription is cancelled.
    const w = await holdingWhileMoving();
    model.answer(CDS, "c{env=prod,zone=a}", item("c-prod-2"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-prod-2"]);

    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
    expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
  });

  it("does not deliver an identical resource from the new subscription", async () => {
    const client = await started("prod");
    const w = recorder<Item>(describeItem);
    client.watch(clusterType, "c", w);
    model.answer(CDS, "c{env=prod,zone=a}", item("same"));
    await model.flush();
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    model.answer(CDS, "c{env=canary,zone=a}", item("same", "7"));
    await model.flush();
    expect(w.take()).toEqual(["resource:same"]);
    expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
  });

  it("clears an ambient error of the old subscription when the new one brings the identical resource", async () => {
    const client = await started("prod");
    const w = recorder<Item>(describeItem);
    const v = recorder<Item>(describeItem, { clears: false });
    client.watch(clusterType, "c", w);
    client.watch(clusterType, "c", v);
    model.answer(CDS, "c{env=prod,zone=a}", item("same"));
    await model.flush();
    model.ambient(CDS, "c{env=prod,zone=a}", failure(StatusCode.INVALID_ARGUMENT, "nacked").error);
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    model.answer(CDS, "c{env=canary,zone=a}", item("same"));
    await model.flush();
    expect(w.take()).toEqual(["resource:same", "ambient:INVALID_ARGUMENT:nacked", "cleared"]);
    // A watcher without onAmbientErrorCleared gets the resource again instead, as from the plain client.
    expect(v.take()).toEqual(["resource:same", "ambient:INVALID_ARGUMENT:nacked", "resource:same"]);
  });

  it("holds back the old subscription's does-not-exist until the new subscription answers", async () => {
    // The server swaps variants: the old one disappears before the new subscription is answered.
    const w = await holdingWhileMoving();
    model.answer(CDS, "c{env=prod,zone=a}", notFound());
    await model.flush();
    expect(w.take()).toEqual([]);
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
  });

  it("keeps the resource through the new subscription's transient errors and NACKs, and moves on its resource", async () => {
    const w = await holdingWhileMoving();
    for (const answer of [
      failure(StatusCode.UNAVAILABLE, "connection"),
      failure(StatusCode.INVALID_ARGUMENT, "nacked"),
      failure(StatusCode.UNAVAILABLE, "server_error"),
      failure(StatusCode.UNAVAILABLE, "timeout"),
    ]) {
      model.answer(CDS, "c{env=canary,zone=a}", answer);
      await model.flush();
      expect(w.take()).toEqual([]);
      expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}", "c{env=prod,zone=a}"]);
    }
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
    expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
  });

  it("moves on a definite answer of the new subscription: does-not-exist, PERMISSION_DENIED", async () => {
    const answers = [
      [notFound(), "error:NOT_FOUND:does_not_exist"],
      [failure(StatusCode.PERMISSION_DENIED, "server_error"), "error:PERMISSION_DENIED:server_error"],
    ] as const;
    for (const [answer, expected] of answers) {
      const w = await holdingWhileMoving();
      model.answer(CDS, "c{env=canary,zone=a}", answer);
      await model.flush();
      expect(w.take()).toEqual([expected]);
      expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
      await model.close();
    }
  });

  it("keeps the resource when the old subscription loses it while the new one has only been NACKed", async () => {
    const w = await holdingWhileMoving();
    model.answer(CDS, "c{env=canary,zone=a}", failure(StatusCode.INVALID_ARGUMENT, "nacked"));
    await model.flush();
    expect(w.take()).toEqual([]);
    model.answer(CDS, "c{env=prod,zone=a}", notFound());
    await model.flush();
    expect(w.take()).toEqual([]);
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
    expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
  });

  it("moves at once when the watcher holds no resource", async () => {
    const client = await started("prod");
    const w = recorder<Item>(describeItem);
    client.watch(clusterType, "c", w);
    model.answer(CDS, "c{env=prod,zone=a}", notFound());
    await model.flush();
    expect(w.take()).toEqual(["error:NOT_FOUND:does_not_exist"]);
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    expect(model.labels(CDS)).toEqual(["c{env=canary,zone=a}"]);
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
  });

  it("goes back to the old subscription when DPDS changes back before the new one answered, and tells what it held back", async () => {
    const w = await holdingWhileMoving();
    model.answer(CDS, "c{env=prod,zone=a}", notFound());
    await model.flush();
    await setDpds({ [CDS_TYPE_NAME]: { env: "prod" } });
    // The old subscription is the one to follow again: what it said meanwhile is delivered now.
    expect(w.take()).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
    expect(model.labels(CDS)).toEqual(["c{env=prod,zone=a}"]);
  });

  it("follows a third change while the second is still waiting", async () => {
    const w = await holdingWhileMoving();
    await setDpds({ [CDS_TYPE_NAME]: { env: "test" } });
    expect(model.labels(CDS)).toEqual(["c{env=prod,zone=a}", "c{env=test,zone=a}"]);
    model.answer(CDS, "c{env=test,zone=a}", item("c-test"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-test"]);
    expect(model.labels(CDS)).toEqual(["c{env=test,zone=a}"]);
  });

  it("moves back to the bootstrap's parameters when the DPDS resource gives none any more", async () => {
    await holding();
    await setDpds({});
    expect(model.labels(CDS)).toEqual(["c{env=boot,zone=a}", "c{env=prod,zone=a}"]);
  });

  it("keeps the DPDS parameters through an ambient error about the DPDS resource (a NACK, a deletion A88 keeps)", async () => {
    const client = await started("prod");
    client.watch(clusterType, "c", recorder(describeItem));
    model.ambient(DPDS, "dynamic-parameters{env=boot,zone=a}", failure(StatusCode.INVALID_ARGUMENT, "nacked").error);
    model.ambient(DPDS, "dynamic-parameters{env=boot,zone=a}", notFound().error);
    await model.flush();
    expect(model.labels(CDS)).toEqual(["c{env=prod,zone=a}"]);
  });

  it("holds back the old subscription's ambient errors about its variant during a move, not those about the servers", async () => {
    // Steps: hold c-prod; DPDS moves to canary; the old subscription is told its variant is gone (ambient, A88)
    // and a NACK: held back; then the servers are unreachable: told; the canary variant arrives: delivered.
    const w = await holdingWhileMoving();
    model.ambient(CDS, "c{env=prod,zone=a}", notFound().error);
    model.ambient(CDS, "c{env=prod,zone=a}", failure(StatusCode.INVALID_ARGUMENT, "nacked").error);
    await model.flush();
    expect(w.take()).toEqual([]);
    model.ambient(CDS, "c{env=prod,zone=a}", failure(StatusCode.UNAVAILABLE, "connection").error);
    await model.flush();
    expect(w.take()).toEqual(["ambient:UNAVAILABLE:connection"]);
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(w.take()).toEqual(["resource:c-canary"]);
  });

  it("leaves watches of other types alone", async () => {
    const client = await started("prod");
    client.watch(listenerType, "l", recorder(describeItem));
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    expect(model.labels(LDS)).toEqual(["l{env=boot,zone=a}"]);
    await setDpds({ [LDS_TYPE_NAME]: { env: "l" } });
    expect(model.labels(LDS)).toEqual(["l{env=l,zone=a}"]);
  });

  it("returns the watcher's promise to the inner client, on forwarded and on moved answers (flow control)", async () => {
    const client = await started("prod");
    const gate = Promise.resolve();
    const seen: string[] = [];
    client.watch(clusterType, "c", {
      onResourceChanged(result) {
        seen.push(result.ok ? (result.resource as Item).value : "error");
        return gate;
      },
      onAmbientError: () => gate,
    });
    model.answer(CDS, "c{env=prod,zone=a}", item("c-prod"));
    await model.flush();
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    model.returned.length = 0;
    model.answer(CDS, "c{env=canary,zone=a}", item("c-canary"));
    await model.flush();
    expect(seen).toEqual(["c-prod", "c-canary"]);
    expect(model.returned).toEqual([gate]);
  });

  it("cancels both subscriptions when the watch is cancelled mid-move, and tells the watcher nothing more", async () => {
    const w = await holding();
    const cancel = w.cancel;
    await setDpds({ [CDS_TYPE_NAME]: { env: "canary" } });
    cancel();
    cancel();
    expect(model.labels(CDS)).toEqual([]);
    w.take();
    await setDpds({ [CDS_TYPE_NAME]: { env: "x" } });
    expect(model.labels(CDS)).toEqual([]);
    expect(w.take()).toEqual([]);
  });
});
