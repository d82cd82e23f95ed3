// A52: a policy that is not built in, registered by its TypedStruct type, chosen by a Cluster's
// load_balancing_policy and given its JSON config; over real HTTP/2.
import { create, toBinary } from "@bufbuild/protobuf";
import { AnySchema, StructSchema } from "@bufbuild/protobuf/wkt";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type ManagementServer,
} from "@xdskit/control-plane";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  builtinLbPolicies,
  type CompletePick,
  createLbPolicyRegistry,
  createXdsTransport,
  type LbPolicyFactory,
  type Subchannel,
  type XdsTransport,
} from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

const TYPE = "xdskit.test.NthEndpoint";

/** Call ends the custom policy's tracker saw (status codes). */
const ended: number[] = [];

/** A subchannel that wraps the transport's own (as an outlier-detection policy would). */
function wrap(inner: Subchannel): Subchannel {
  return {
    get address() {
      return inner.address;
    },
    get endpoint() {
      return inner.endpoint;
    },
    get state() {
      return inner.state;
    },
    get lastError() {
      return inner.lastError;
    },
    watch: (listener) => inner.watch(listener),
    requestConnection: () => inner.requestConnection(),
    close: () => inner.close(),
    delegate: inner,
  };
}

/**
 * Sends every call to endpoint number `index` (in EDS order) once it is READY, through a wrapping subchannel, and
 * counts each call's end with its own tracker.
 */
const nthEndpoint: LbPolicyFactory<{ index: number }> = {
  name: TYPE,
  typeNames: [TYPE],
  parseConfig(json) {
    const index = (json as { index?: unknown }).index;
    if (typeof index !== "number") throw new Error("index must be a number");
    return { index };
  },
  create(helper) {
    let subchannels: Subchannel[] = [];
    let index = 0;
    const publish = () => {
      const chosen = subchannels[index];
      if (chosen?.state === "READY") {
        const pick: CompletePick = {
          type: "complete",
          subchannel: wrap(chosen),
          tracker: { onCallEnded: (info) => ended.push(info.code) },
        };
        helper.updateState("READY", { pick: () => pick });
      } else {
        helper.updateState("CONNECTING", { pick: () => ({ type: "queue" }) });
      }
    };
    return {
      update({ config, endpoints }) {
        for (const subchannel of subchannels) subchannel.close();
        index = config.index;
        subchannels = endpoints.map((endpoint) => helper.createSubchannel(endpoint.addresses[0]!, endpoint));
        for (const subchannel of subchannels) {
          subchannel.watch(publish);
          subchannel.requestConnection();
        }
        publish();
      },
      exitIdle() {},
      close() {
        for (const subchannel of subchannels) subchannel.close();
      },
    };
  },
};

/** xds.type.v3.TypedStruct { type_url = 1; value = 2 } with a Struct value, serialized by hand. */
function typedStruct(typeUrl: string, value: Record<string, number>) {
  const url = new TextEncoder().encode(typeUrl);
  const struct = toBinary(
    StructSchema,
    create(StructSchema, {
      fields: Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, { kind: { case: "numberValue" as const, value: v } }]),
      ),
    }),
  );
  const bytes = new Uint8Array([0x0a, url.length, ...url, 0x12, struct.length, ...struct]);
  return create(AnySchema, { typeUrl: "type.googleapis.com/xds.type.v3.TypedStruct", value: bytes });
}

describe("a custom LB policy (A52)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let transport: XdsTransport;

  beforeAll(async () => {
    server = await startControlPlane();
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    const cluster = buildCluster({ name: "custom-cluster" });
    cluster.loadBalancingPolicy = {
      $typeName: "envoy.config.cluster.v3.LoadBalancingPolicy",
      policies: [
        {
          $typeName: "envoy.config.cluster.v3.LoadBalancingPolicy.Policy",
          typedExtensionConfig: {
            $typeName: "envoy.config.core.v3.TypedExtensionConfig",
            name: "nth",
            typedConfig: typedStruct(`type.googleapis.com/${TYPE}`, { index: 1 }),
          },
        },
      ],
    };
    server.setSnapshot([
      buildListener({ name: "custom", routeConfigName: "custom-route" }),
      buildRouteConfiguration({ name: "custom-route", cluster: "custom-cluster" }),
      cluster,
      buildClusterLoadAssignment({
        clusterName: "custom-cluster",
        localities: [{ zone: "z", endpoints: [a.address, b.address] }],
      }),
    ]);
    client = clientFor(server);
    transport = createXdsTransport({
      target: "xds:///custom",
      client,
      lbPolicies: createLbPolicyRegistry([...builtinLbPolicies, nthEndpoint as LbPolicyFactory]),
    });
  });

  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("routes every call as the custom policy and its config say, through a wrapping subchannel, with its tracker", async () => {
    const echo = echoClient(transport);
    for (let i = 0; i < 6; i++) expect(await served(echo)).toBe("b");
    // The pick's subchannel was a wrapper (sent through its delegate), and its tracker saw every call end OK.
    expect(ended).toEqual([0, 0, 0, 0, 0, 0]);
  });
});
