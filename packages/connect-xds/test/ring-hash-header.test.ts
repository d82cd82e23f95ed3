// A76's request_hash_header over real HTTP/2: a Cluster's load_balancing_policy names ring_hash by a TypedStruct
// (`ring_hash_experimental`, gRPC's JSON config) with `requestHashHeader`; the route has no hash_policy, so without
// A76 every call would get a random hash. Calls with the same header value reach the same backend.
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
  createLbPolicyRegistry,
  createRingHashPolicyFactory,
  createXdsTransport,
} from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

/** xds.type.v3.TypedStruct { type_url = 1; value = 2 } with a Struct of strings and numbers. */
function typedStruct(typeUrl: string, value: Record<string, string | number>) {
  const url = new TextEncoder().encode(typeUrl);
  const struct = toBinary(
    StructSchema,
    create(StructSchema, {
      fields: Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          typeof v === "number"
            ? { kind: { case: "numberValue" as const, value: v } }
            : { kind: { case: "stringValue" as const, value: v } },
        ]),
      ),
    }),
  );
  const bytes = new Uint8Array([0x0a, url.length, ...url, 0x12, struct.length, ...struct]);
  return create(AnySchema, { typeUrl: "type.googleapis.com/xds.type.v3.TypedStruct", value: bytes });
}

describe("ring_hash requestHashHeader (A76) over HTTP/2", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];

  beforeAll(async () => {
    server = await startControlPlane();
    backends = await Promise.all(["a", "b", "c"].map((name) => startBackend(name)));
    const cluster = buildCluster({ name: "sessions-cluster" });
    cluster.loadBalancingPolicy = {
      $typeName: "envoy.config.cluster.v3.LoadBalancingPolicy",
      policies: [
        {
          $typeName: "envoy.config.cluster.v3.LoadBalancingPolicy.Policy",
          typedExtensionConfig: {
            $typeName: "envoy.config.core.v3.TypedExtensionConfig",
            name: "ring",
            typedConfig: typedStruct("type.googleapis.com/ring_hash_experimental", {
              minRingSize: 64,
              maxRingSize: 256,
              requestHashHeader: "x-session",
            }),
          },
        },
      ],
    };
    server.setSnapshot([
      buildListener({ name: "sessions", routeConfigName: "sessions-route" }),
      buildRouteConfiguration({ name: "sessions-route", cluster: "sessions-cluster" }),
      cluster,
      buildClusterLoadAssignment({
        clusterName: "sessions-cluster",
        localities: [{ zone: "z", endpoints: backends.map((b) => b.address) }],
      }),
    ]);
    // A client of its own: the CDS type that accepts this TypedStruct is registered with it first.
    client = clientFor(server);
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([...backends.map((b) => b.close()), server.close()]);
  });

  it("sends every call with the same header value to the same backend", async () => {
    const transport = createXdsTransport({
      target: "xds:///sessions",
      client,
      lbPolicies: createLbPolicyRegistry([...builtinLbPolicies, createRingHashPolicyFactory({ typedStruct: true })]),
    });
    try {
      const echo = echoClient(transport);
      const servedBy = new Map<string, Set<string>>();
      for (let round = 0; round < 6; round++) {
        for (const session of ["s1", "s2", "s3", "s4"]) {
          const reply = await echo.unary({ value: session }, { headers: { "x-session": session } });
          const by = reply.value.split(":")[0] as string;
          servedBy.set(session, (servedBy.get(session) ?? new Set()).add(by));
        }
      }
      expect([...servedBy.values()].map((set) => set.size)).toEqual([1, 1, 1, 1]);
    } finally {
      await transport.close();
    }
  });
});
