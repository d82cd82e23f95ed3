// The receive limit (docs/limits.md#client): a response larger than `maxReceiveMessageBytes` fails the ADS stream
// with RESOURCE_EXHAUSTED, which the watchers see as a connection error naming it; nothing is cached from it.
//
// Steps: (1) serve a cluster whose encoding exceeds a 2 KiB limit; (2) watch it with a client limited to 2 KiB;
// (3) expect an UNAVAILABLE connection error whose message carries RESOURCE_EXHAUSTED; (4) expect the same watch on a
// client with the default limit to get the cluster.
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterResourceType, createXdsClient, type ResourceResult } from "../src/index.js";

let server: ManagementServer;

beforeAll(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
  // A long EDS service name makes the Cluster larger than the limit.
  server.setResources([buildCluster({ name: "big", edsServiceName: "x".repeat(4096) })]);
});

afterAll(async () => {
  await server.close();
});

async function firstResult(maxReceiveMessageBytes?: number): Promise<ResourceResult<unknown>> {
  const client = createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }] },
    env: {},
    ...(maxReceiveMessageBytes === undefined ? {} : { maxReceiveMessageBytes }),
  });
  try {
    return await new Promise((resolve) => {
      client.watch(clusterResourceType, "big", { onResourceChanged: resolve, onAmbientError: () => {} });
    });
  } finally {
    await client.close();
  }
}

it("a response over maxReceiveMessageBytes fails the stream with RESOURCE_EXHAUSTED, seen as a connection error", async () => {
  const limited = await firstResult(2048);
  expect(limited.ok).toBe(false);
  if (limited.ok) return;
  expect(limited.error.kind).toBe("connection");
  expect(limited.error.message).toMatch(/^\[UNAVAILABLE\] .*RESOURCE_EXHAUSTED/);
  const unlimited = await firstResult();
  expect(unlimited.ok && (unlimited.resource as { name: string }).name).toBe("big");
});
