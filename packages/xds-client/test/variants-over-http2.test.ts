// TP2 variants end to end over real HTTP/2 on 127.0.0.1, in both protocols: responses written onto the control
// plane's stream (its hooks inject what a variant-serving server sends), the client's watchers, ACKs and CSDS.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import {
  type DynamicParameterConstraints,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createXdsClient, type XdsClient } from "../src/index.js";
import { csdsRows } from "./support/harness.js";
import { type RecordingWatcher, recordingWatcher } from "./support/recorder.js";
import { listener, listenerAny, type TestListener, testListenerType } from "./support/test-types.js";

const LDS = testListenerType.typeUrl;

let server: ManagementServer;
let client: XdsClient | undefined;

beforeEach(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  await server.close();
});

function env(value: string): DynamicParameterConstraints {
  return create(ResourceSchema, {
    resourceName: {
      dynamicParameterConstraints: {
        type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value } } },
      },
    },
  }).resourceName!.dynamicParameterConstraints!;
}

function variant(statPrefix: string, constraints: DynamicParameterConstraints, version: string) {
  return create(ResourceSchema, {
    resourceName: { name: "L", dynamicParameterConstraints: constraints },
    version,
    resource: listenerAny("L", statPrefix),
  });
}

/** What a watcher saw: stat prefixes of resources, and error kinds. */
async function seen(w: RecordingWatcher<TestListener>, count: number): Promise<string[]> {
  for (let i = 0; i < 500 && w.events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return w
    .take()
    .map((e) =>
      e.kind === "resource" ? e.resource.statPrefix : e.kind === "cleared" ? e.kind : `${e.kind}:${e.error.code}`,
    );
}

describe.each(["GRPC", "DELTA_GRPC"] as const)("variants over %s", (apiType) => {
  it("routes each variant to its subscribers, removes one while the other stays, and errors one variant only", async () => {
    // Steps: two subscriptions of listener L, {env:prod} and {env:test}; (1) both variants arrive; (2) the test
    // variant goes (SotW: omitted from the full LDS state; delta: removed_resource_names) while prod changes;
    // (3) a TP3 error for the prod variant only; CSDS after each step; every response ACKed.
    // The control plane has no L: its delta stream would say so first (a removal); drop that one response.
    if (apiType === "DELTA_GRPC") server.hooks.drop({ typeUrl: LDS }, 1);
    client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
        node: { id: "variants" },
      },
      env: {},
    });
    const prod = recordingWatcher<TestListener>();
    const test = recordingWatcher<TestListener>();
    client.watch(testListenerType, "L", prod, { dynamicParameters: { env: "prod" } });
    client.watch(testListenerType, "L", test, { dynamicParameters: { env: "test" } });
    const subscribed = await server.hooks.waitForRequest((r) => r.typeUrl === LDS, { timeoutMs: 5_000 });
    if (subscribed.kind === "sotw") {
      expect(subscribed.request.resourceLocators.map((l) => l.dynamicParameters.env).sort()).toEqual(["prod", "test"]);
    } else {
      expect(subscribed.request.resourceLocatorsSubscribe.map((l) => l.dynamicParameters.env).sort()).toEqual([
        "prod",
        "test",
      ]);
    }
    const streamId = server.streams()[0]!.id;
    const respond = async (
      version: string,
      variants: ReturnType<typeof variant>[],
      removed: DynamicParameterConstraints[],
      errors: { constraints: DynamicParameterConstraints; code: number }[] = [],
    ) => {
      const mark = server.hooks.mark();
      const resourceErrors = errors.map((e) => ({
        resourceName: { name: "L", dynamicParameterConstraints: e.constraints },
        errorDetail: { code: e.code, message: "server says no" },
      }));
      const nonce =
        apiType === "GRPC"
          ? server.hooks.injectResponse(streamId, {
              typeUrl: LDS,
              versionInfo: version,
              resources: variants.map((v) => anyPack(ResourceSchema, v)),
              resourceErrors,
            })
          : server.hooks.injectResponse(streamId, {
              typeUrl: LDS,
              systemVersionInfo: version,
              resources: variants,
              removedResourceNames: removed.map((c) => ({ name: "L", dynamicParameterConstraints: c })),
              resourceErrors,
            });
      const answer = await server.hooks.waitForRequest((r) => r.typeUrl === LDS && r.request.responseNonce === nonce, {
        after: mark,
        timeoutMs: 5_000,
      });
      expect(answer.errorDetail).toBeUndefined();
    };

    await respond("1", [variant("p1", env("prod"), "1"), variant("t1", env("test"), "1")], []);
    expect(await seen(prod, 1)).toEqual(["p1"]);
    expect(await seen(test, 1)).toEqual(["t1"]);
    expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([
      ["L{env=prod}", "ACKED"],
      ["L{env=test}", "ACKED"],
    ]);

    await respond("2", [variant("p2", env("prod"), "2")], [env("test")]);
    expect(await seen(prod, 1)).toEqual(["p2"]);
    expect(await seen(test, 1)).toEqual(["ambient:5"]);
    expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([
      ["L{env=prod}", "ACKED"],
      ["L{env=test}", "DOES_NOT_EXIST"],
    ]);

    await respond("3", [], [], [{ constraints: env("prod"), code: 14 }]);
    expect(await seen(prod, 1)).toEqual(["ambient:14"]);
    expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([
      ["L{env=prod}", "RECEIVED_ERROR"],
      ["L{env=test}", "DOES_NOT_EXIST"],
    ]);
    expect(test.take()).toEqual([]);
  });

  it("scenario 68: an update to one of two overlapping variants reaches only the subscribers that hold it", async () => {
    // Steps: a control plane that allows overlapping variants serves listener L as env=prod (p1) and as
    // env=prod && version=v2 (v1); {env:prod} holds the first, {env:prod, version:v2} the second (the most specific
    // it matches). (1) env=prod alone changes (p2): only {env:prod} hears of it; (2) the v2 variant alone changes
    // (v2): only {env:prod, version:v2} hears of it; each response ACKed.
    await server.close();
    server = await createManagementServer({ host: "127.0.0.1", port: 0, allowOverlappingVariants: true });
    const prodVariant = (statPrefix: string) => ({ resource: listener("L", statPrefix), constraints: "env=prod" });
    const v2Variant = (statPrefix: string) => ({
      resource: listener("L", statPrefix),
      constraints: "env=prod && version=v2",
    });
    server.setResources([prodVariant("p1"), v2Variant("v1")]);
    client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
        node: { id: "variants" },
      },
      env: {},
    });
    const prod = recordingWatcher<TestListener>();
    const v2 = recordingWatcher<TestListener>();
    client.watch(testListenerType, "L", prod, { dynamicParameters: { env: "prod" } });
    client.watch(testListenerType, "L", v2, { dynamicParameters: { env: "prod", version: "v2" } });
    expect(await seen(prod, 1)).toEqual(["p1"]);
    expect(await seen(v2, 1)).toEqual(["v1"]);
    /** Publishes, then waits for the client's ACK of the response that carried it. */
    const publish = async (resource: ReturnType<typeof prodVariant>) => {
      const mark = server.hooks.mark();
      server.setResources([resource]);
      const response = await server.hooks.waitForResponse((r) => r.typeUrl === LDS, { after: mark, timeoutMs: 5_000 });
      const ack = await server.hooks.waitForRequest((r) => r.typeUrl === LDS && r.responseNonce === response.nonce, {
        after: mark,
        timeoutMs: 5_000,
      });
      expect(ack.errorDetail).toBeUndefined();
      return response;
    };
    await publish(prodVariant("p2"));
    expect(await seen(prod, 1)).toEqual(["p2"]);
    expect(v2.take()).toEqual([]);
    await publish(v2Variant("v2"));
    expect(await seen(v2, 1)).toEqual(["v2"]);
    expect(prod.take()).toEqual([]);
    // (3) The control plane sends every subscription's variant in a response that carries one of them; a TP2 server
    // may send the changed variant alone (p3, written onto the stream). Delta: the client still knows the v2
    // variant, which stays the most specific for {env:prod, version:v2}: only {env:prod} hears of p3. State of the
    // world: a response lists every variant of the names it carries (all of LDS), so the v2 variant is gone and
    // {env:prod, version:v2} moves to p3 (docs/decisions.md#variant-selection).
    const streamId = server.streams()[0]!.id;
    const p3 = create(ResourceSchema, {
      resourceName: { name: "L", dynamicParameterConstraints: env("prod") },
      version: "p3",
      resource: listenerAny("L", "p3"),
    });
    const mark = server.hooks.mark();
    const nonce =
      apiType === "GRPC"
        ? server.hooks.injectResponse(streamId, {
            typeUrl: LDS,
            versionInfo: "p3",
            resources: [anyPack(ResourceSchema, p3)],
          })
        : server.hooks.injectResponse(streamId, { typeUrl: LDS, systemVersionInfo: "p3", resources: [p3] });
    const ack = await server.hooks.waitForRequest((r) => r.typeUrl === LDS && r.responseNonce === nonce, {
      after: mark,
      timeoutMs: 5_000,
    });
    expect(ack.errorDetail).toBeUndefined();
    expect(await seen(prod, 1)).toEqual(["p3"]);
    if (apiType === "GRPC") expect(await seen(v2, 1)).toEqual(["p3"]);
    else expect(v2.take()).toEqual([]);
  });
});
