// Weighted localities (A27) over real HTTP/2: calls split between two localities of weights 1 and 3 as the weights
// say, with draws spread evenly over [0, 1) so that the split is exact; round robin within each locality.
import type { ManagementServer } from "@xdskit/control-plane";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { XdsTransport } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

describe("weighted localities over HTTP/2", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];
  let transport: XdsTransport;
  let draw = 0;

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    backends = await Promise.all(["light", "heavy-1", "heavy-2"].map((name) => startBackend(name)));
  });
  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all(backends.map((b) => b.close()));
    await server.close();
  });

  it("splits calls 1:3 by locality weight, round robin inside a locality", async () => {
    const [light, heavy1, heavy2] = backends as [Backend, Backend, Backend];
    server.setSnapshot(
      simpleSnapshot("localities", "localities-cluster", [
        { zone: "z-light", weight: 1, endpoints: [light.address] },
        { zone: "z-heavy", weight: 3, endpoints: [heavy1.address, heavy2.address] },
      ]),
    );
    transport = createXdsTransportWithInternals(
      { target: "xds:///localities", client },
      { random: () => ((draw++ % 100) + 0.5) / 100 },
    );
    const echo = echoClient(transport);
    // Until both localities serve (they connect independently), then 100 calls.
    for (let i = 0; i < 200 && !backends.every((b) => (b.calls.get("Unary") ?? 0) > 0); i++) await served(echo);
    const counts = new Map<string, number>();
    for (let i = 0; i < 100; i++) {
      const name = await served(echo);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    const heavy = (counts.get("heavy-1") ?? 0) + (counts.get("heavy-2") ?? 0);
    expect([counts.get("light"), heavy]).toEqual([25, 75]);
    // Round robin inside the heavy locality: an even split, give or take the call that started its rotation.
    expect(Math.abs((counts.get("heavy-1") ?? 0) - (counts.get("heavy-2") ?? 0))).toBeLessThanOrEqual(1);
  });
});
