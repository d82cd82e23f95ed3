// The warm-up of each protocol's change paths (src/server/warm-up.ts): the first stream of a protocol starts it, it
// runs to its end, and a real server never sees it.
import { afterEach, describe, expect, test } from "vitest";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "../src/index.js";
import { warmUpOnce, warmUpStarted } from "../src/server/management-server.js";
import { WARM_UP_CHANGES } from "../src/server/warm-up.js";
import { createHarness, type Harness } from "./ads-client.js";

let server: ManagementServer | undefined;
let h: Harness | undefined;

afterEach(async () => {
  h?.cleanup();
  await server?.close();
  server = undefined;
  h = undefined;
});

describe("the warm-up", () => {
  test("starts with a server's first stream of a protocol, and leaves nothing on the server", async () => {
    server = await createManagementServer();
    h = createHarness(server.url);
    const opened: number[] = [];
    const responses: string[] = [];
    server.hooks.on("stream-open", (e) => opened.push(e.streamId));
    server.hooks.on("response", (e) => responses.push(`${e.streamId}:${e.nonce}:${e.versionInfo}`));
    // Creating a server starts nothing: only a stream does, and only its protocol's.
    expect(warmUpStarted("delta")).toBe(false);
    expect(warmUpStarted("sotw")).toBe(false);

    server.setResource(buildCluster({ name: "c1" }));
    const version = server.typeVersion(CDS_TYPE_URL);
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: ["c1"] });
    const first = await d.next();
    expect(warmUpStarted("delta")).toBe(true);
    expect(warmUpStarted("sotw")).toBe(false);
    expect(await warmUpOnce("delta")).toEqual({ responses: [WARM_UP_CHANGES + 1, WARM_UP_CHANGES + 1] });

    // The server's own numbering is untouched: its first stream, nonce and version are the first ones.
    expect(version).toBe("1");
    expect(first.nonce).toBe("1");
    expect(first.systemVersionInfo).toBe(version);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual(["c1"]);
    expect(server.streams().map((s) => s.id)).toEqual([1]);
    expect(opened).toEqual([1]);
    expect(responses).toEqual(["1:1:1"]);

    // A change reaches the real stream alone.
    await d.send({ typeUrl: CDS_TYPE_URL, responseNonce: first.nonce });
    server.setResource(buildCluster({ name: "c1", edsServiceName: "changed" }));
    const changed = await d.next();
    expect(changed.resources.map((r) => r.name)).toEqual(["c1"]);
    expect(responses).toEqual(["1:1:1", "1:2:2"]);
  });

  test("each protocol's runs to its end: both streams get their first response and every change", async () => {
    // Called directly, as a first stream does (the SotW one starts here): a report per protocol, the same every time.
    for (const kind of ["sotw", "delta"] as const) {
      const report = await warmUpOnce(kind);
      expect(report).toEqual({ responses: [WARM_UP_CHANGES + 1, WARM_UP_CHANGES + 1] });
      expect(warmUpOnce(kind)).toBe(warmUpOnce(kind));
    }
  });
});
