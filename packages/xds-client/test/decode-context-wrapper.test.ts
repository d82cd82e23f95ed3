// A decoder sees the `Resource` wrapper its resource came in (DecodeContext.wrapper): what a caching relay needs to
// pass a variant's resource_name and cache_control on. Over real HTTP/2 against the control plane, both protocols.
import { buildListener, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { afterEach, describe, expect, it } from "vitest";
import { createXdsClient, type DecodeContext, type ResourceType, type XdsClient } from "../src/index.js";
import { recordingWatcher } from "./support/recorder.js";

interface Seen {
  readonly name: string;
  readonly wrapper: DecodeContext["wrapper"];
}

/** Listeners decoded to the wrapper their decoder was given, named by the Listener's own name field. */
const wrapperType: ResourceType<Seen> = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  typeName: "ListenerResource",
  allResourcesRequiredInSotW: true,
  decode(any, context) {
    // The Listener's name is field 1: enough to name it without the listener decoder.
    const length = any.value[1] ?? 0;
    const name = Buffer.from(any.value.subarray(2, 2 + length)).toString();
    return { ok: true, name, value: { name, wrapper: context.wrapper } };
  },
};

let server: ManagementServer | undefined;
let client: XdsClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

describe.each(["GRPC", "DELTA_GRPC"] as const)("DecodeContext.wrapper over %s", (apiType) => {
  it("gives the decoder the wrapper's resource_name and cache_control; a bare SotW resource has none", async () => {
    server = await createManagementServer();
    server.setResources([
      { resource: buildListener({ name: "variant", routeConfigName: "r" }), constraints: "env=prod", doNotCache: true },
      buildListener({ name: "plain", routeConfigName: "r" }),
    ]);
    client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
        node: { id: "wrapper" },
      },
      env: {},
    });
    const variant = recordingWatcher<Seen>();
    const plain = recordingWatcher<Seen>();
    client.watch(wrapperType, "variant", variant, { dynamicParameters: { env: "prod" } });
    client.watch(wrapperType, "plain", plain);
    for (let i = 0; i < 500 && variant.events.length + plain.events.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [v] = variant.take();
    const [p] = plain.take();
    if (v?.kind !== "resource" || p?.kind !== "resource")
      throw new Error(`expected resources, got ${v?.kind} ${p?.kind}`);
    expect(v.resource.wrapper?.resourceName?.name).toBe("variant");
    expect(v.resource.wrapper?.resourceName?.dynamicParameterConstraints?.type.case).toBe("constraint");
    expect(v.resource.wrapper?.cacheControl?.doNotCache).toBe(true);
    if (apiType === "GRPC") expect(p.resource.wrapper).toBeUndefined();
    else {
      expect(p.resource.wrapper?.name).toBe("plain");
      expect(p.resource.wrapper?.cacheControl).toBeUndefined();
    }
  });
});
