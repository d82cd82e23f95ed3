// pick_first (A62) as a cluster's `load_balancing_policy` over real HTTP/2: every call goes to the first endpoint
// that connects (round robin would alternate), and when that backend goes away the calls move to the other one.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { ManagementServer } from "@xdskit/control-plane";
import {
  type Cluster,
  LoadBalancingPolicy_PolicySchema,
  LoadBalancingPolicySchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { TypedExtensionConfigSchema } from "@xdskit/protos/envoy/config/core/v3/extension_pb";
import { PickFirstSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/pick_first/v3/pick_first_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

describe("pick_first over HTTP/2 (A62)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let transport: XdsTransport;

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
  });
  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all([a.close(), b.close()]);
    await server.close();
  });

  it("sends every call to the first endpoint, and to the next once the first is gone", async () => {
    const resources = simpleSnapshot("pf", "pf-cluster", [{ zone: "z", endpoints: [a.address, b.address] }]);
    (resources[2] as Cluster).loadBalancingPolicy = create(LoadBalancingPolicySchema, {
      policies: [
        create(LoadBalancingPolicy_PolicySchema, {
          typedExtensionConfig: create(TypedExtensionConfigSchema, {
            name: "pick_first",
            typedConfig: anyPack(PickFirstSchema, create(PickFirstSchema, { shuffleAddressList: false })),
          }),
        }),
      ],
    });
    server.setSnapshot(resources);
    transport = createXdsTransport({ target: "xds:///pf", client });
    const echo = echoClient(transport);
    const names: string[] = [];
    for (let i = 0; i < 10; i++) names.push(await served(echo));
    // a, unless b connected first (Happy Eyeballs starts b when a takes over 250 ms).
    const [chosen, other] = names[0] === "a" ? [a, b] : [b, a];
    expect(names).toEqual(Array(10).fill(chosen.name));
    await chosen.close();
    await untilServedBy(echo, other.name);
    for (let i = 0; i < 5; i++) expect(await served(echo)).toBe(other.name);
  });
});
