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
import { listenerAny, type TestListener, testListenerType } from "./support/test-types.js";

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
});
