// contentVersions: two servers holding the same bytes give them the same version, so a delta client that reconnects
// from one to the other with initial_resource_versions is sent only what differs; `force` still makes a new version.
// Over real HTTP/2, raw delta streams.
import { afterEach, expect, test } from "vitest";
import {
  buildClusterLoadAssignment,
  createManagementServer,
  EDS_TYPE_URL,
  type ManagementServer,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";

const endpoints = (name: string, port = 80) =>
  buildClusterLoadAssignment({ clusterName: name, localities: [{ endpoints: [`127.0.0.1:${port}`] }] });

const open: { server: ManagementServer; harness: Harness }[] = [];
afterEach(async () => {
  for (const { server, harness } of open.splice(0)) {
    harness.cleanup();
    await server.close();
  }
});

async function start(): Promise<{ server: ManagementServer; harness: Harness }> {
  const server = await createManagementServer({ contentVersions: true });
  const started = { server, harness: createHarness(server.url) };
  open.push(started);
  return started;
}

test("a delta client moving to another server with the same resources is sent only what differs", async () => {
  const one = await start();
  const two = await start();
  // The second server's counters run ahead: its versions would differ if counted.
  two.server.setResources([endpoints("e0")]);
  two.server.removeResource(EDS_TYPE_URL, "e0");
  const v1 = one.server.setResource(endpoints("e1"));
  const v2 = one.server.setResource(endpoints("e2"));
  expect(two.server.setResource(endpoints("e1"))).toBe(v1);
  const v2Changed = two.server.setResource(endpoints("e2", 99));
  expect(v2Changed).not.toBe(v2);
  expect(Number(v1)).toBeGreaterThan(1_000_000);

  const first = one.harness.delta();
  await first.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1", "e2"] });
  const held = (await first.next()).resources.map((r) => [r.name, r.version]);
  expect(held).toEqual([
    ["e1", v1],
    ["e2", v2],
  ]);

  const mark = two.server.hooks.mark();
  const second = two.harness.delta();
  await second.send({
    node: { id: "n" },
    typeUrl: EDS_TYPE_URL,
    resourceNamesSubscribe: ["e1", "e2"],
    initialResourceVersions: Object.fromEntries(held),
  });
  expect((await second.next()).resources.map((r) => [r.name, r.version])).toEqual([["e2", v2Changed]]);
  // One response only: what the client already held was not in it.
  expect(
    two.server.hooks
      .responses()
      .filter((r) => r.seq > mark)
      .map((r) => r.resourceNames),
  ).toEqual([["e2"]]);

  // `force` is a new version even for the same bytes.
  const forced = two.server.setResource(endpoints("e1"), { force: true });
  expect(forced).not.toBe(v1);
});
