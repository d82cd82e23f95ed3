// A name's subscriptions as the cache keeps them (subscriptions.ts): its only one held without a Map, two or more (TP2
// parameter maps) a Map, and back again when watches end. Each step must route responses and report CSDS as before.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, it } from "vitest";
import { csdsRows, setup } from "./support/harness.js";
import { flush, recordingWatcher } from "./support/recorder.js";
import { listenerAny, testListenerType } from "./support/test-types.js";

const LDS = testListenerType.typeUrl;

/** The listener "V" for subscriptions whose `env` is `env`. */
function variant(env: string, statPrefix: string) {
  return anyPack(
    ResourceSchema,
    create(ResourceSchema, {
      resourceName: {
        name: "V",
        dynamicParameterConstraints: {
          type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value: env } } },
        },
      },
      resource: listenerAny("V", statPrefix),
    }),
  );
}

describe("a name's subscriptions going from one to two and back", () => {
  it("route each variant to its subscription and leave CSDS exact at every step", async () => {
    const { client, server } = setup({ bootstrap: { dynamic_parameters: { env: "prod" } } });
    const prod = recordingWatcher<unknown>();
    const test = recordingWatcher<unknown>();
    const stopProd = client.watch(testListenerType, "V", prod, { dynamicParameters: { env: "prod" } });
    const stopTest = client.watch(testListenerType, "V", test, { dynamicParameters: { env: "test" } });
    const stream = await server.nextStream();
    await stream.nextRequest();
    const both = [variant("prod", "p1"), variant("test", "t1")];
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: both });
    await flush();
    expect([prod.take().length, test.take().length]).toEqual([1, 1]);
    expect(csdsRows(client).map((r) => `${r.name} ${r.status} ${r.version}`)).toEqual([
      "V{env=prod} ACKED 1",
      "V{env=test} ACKED 1",
    ]);

    // Down to one: the remaining subscription still gets its variant, and only it is reported.
    stopTest();
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "2",
      nonce: "n2",
      resources: [variant("prod", "p2"), variant("test", "t2")],
    });
    await flush();
    expect(prod.take().map((e) => (e.kind === "resource" ? e.version : e.kind))).toEqual(["2"]);
    expect(test.take()).toEqual([]);
    expect(csdsRows(client).map((r) => `${r.name} ${r.status} ${r.version}`)).toEqual(["V{env=prod} ACKED 2"]);

    // Two again, then none.
    const again = recordingWatcher<unknown>();
    const stopAgain = client.watch(testListenerType, "V", again, { dynamicParameters: { env: "test" } });
    await stream.exchange({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: both });
    await flush();
    expect(again.take().map((e) => (e.kind === "resource" ? e.version : e.kind))).toEqual(["3"]);
    expect(csdsRows(client).map((r) => r.name)).toEqual(["V{env=prod}", "V{env=test}"]);
    stopProd();
    expect(csdsRows(client).map((r) => r.name)).toEqual(["V{env=test}"]);
    stopAgain();
    expect(csdsRows(client)).toEqual([]);
    await client.close();
  });
});
