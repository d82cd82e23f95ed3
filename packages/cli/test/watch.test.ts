// `xdskit watch` and `xdskit list` against a real control plane on 127.0.0.1. Steps per test:
//  1. an update, a change and a removal of one cluster, as text lines and proto JSON, then --count ends it; exit 1,
//     since the removal was an (ambient) error;
//  2. with --json and a bootstrap file: one JSON object per event, a NACKed resource as an error event (exit 1);
//  3. a full type URL and --count 1 (exit 0); Ctrl-C ends a watch with exit 0; a bad bootstrap exits 1;
//  4. --timeout before any event, and before --count events: exit 1, saying so;
//  5. '*': every cluster as it arrives, then a removal (an error event); --delta with --server;
//  6. list: the names of a type's resources, SotW and delta, and an invalid one named on stderr (exit 1);
//  7. a watch lives through the server being down, before its first answer and after it, and gets what the server
//     sends once it is back.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  buildCluster,
  buildListener,
  CDS_TYPE_URL,
  createManagementServer,
  LDS_TYPE_URL,
  type ManagementServer,
} from "@xdskit/control-plane";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

describe("xdskit watch", () => {
  let server: ManagementServer;
  const dir = mkdtempSync(join(tmpdir(), "xdskit-watch-"));

  beforeAll(async () => {
    server = await createManagementServer();
  });
  afterEach(() => {
    killAll();
    server.setSnapshot([]);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints each update of a cluster and its removal; after --count events, exit 1 for the removal (an ambient error)", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const watch = startXdskit(["watch", "cds", "echo", "--server", server.address, "--count", "3"]);
    await watch.waitFor(/cds echo: version \d+\n/);
    const mark = server.hooks.mark();
    server.setResource(buildCluster({ name: "echo", edsServiceName: "echo-v2" }));
    await server.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", { after: mark });
    server.removeResource(CDS_TYPE_URL, "echo");
    const { code, stdout } = await watch.finished;
    expect(code).toBe(1);
    const events = stdout.split("\n").filter((line) => line.startsWith("["));
    expect(events.map((line) => line.replace(/^\[[^\]]+\] /, "").replace(/version \d+/, "version N"))).toEqual([
      "cds echo: version N",
      "cds echo: version N",
      // A removed resource stays in use (deletions are ignored by default): an ambient error.
      expect.stringMatching(/^cds echo: ambient_error NOT_FOUND: resource echo was removed by the xDS server/),
    ]);
    // Each update is followed by the resource as proto JSON.
    expect(stdout).toContain('"serviceName": "echo-v2"');
  });

  it("--json with a bootstrap file: one object per event; a NACKed listener is an error event", async () => {
    server.setResources([
      buildListener({ name: "good", routeConfigName: "r" }),
      create(ListenerSchema, { name: "bad" }),
    ]);
    const bootstrap = join(dir, "bootstrap.json");
    writeFileSync(
      bootstrap,
      JSON.stringify({
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "cli-test" },
      }),
    );
    const { code, stdout } = await runXdskit([
      "watch",
      "lds",
      "good",
      "bad",
      "--bootstrap",
      bootstrap,
      "--json",
      "--count",
      "2",
    ]);
    expect(code).toBe(1);
    const events = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(events).toEqual([
      {
        time: expect.any(String),
        event: "error",
        name: "bad",
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining("bad"),
        type: LDS_TYPE_URL,
      },
      {
        time: expect.any(String),
        event: "resource",
        name: "good",
        version: expect.any(String),
        type: LDS_TYPE_URL,
        resource: expect.objectContaining({ name: "good", apiListener: expect.any(Object) }),
      },
    ]);
    const request = server.hooks.requests().find((r) => r.typeUrl === LDS_TYPE_URL);
    expect(request?.node?.id).toBe("cli-test");
  });

  it("takes a full type URL, exits 0 after --count resources; Ctrl-C ends a watch with exit 0", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const counted = await runXdskit(["watch", CDS_TYPE_URL, "echo", "--server", server.address, "--count", "1"]);
    expect([counted.code, counted.stdout]).toEqual([0, expect.stringMatching(/ echo: version \d+\n/)]);
    const watch = startXdskit(["watch", "cds", "echo", "--server", server.address]);
    await watch.waitFor(/ echo: version \d+\n/);
    const { code } = await watch.interrupt();
    expect(code).toBe(0);
  });

  it("--timeout ends a watch with exit 1 when nothing, or fewer than --count events, arrived", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const [nothing, fewer] = await Promise.all([
      // A name the server does not have: the client's does-not-exist timer (15 s) is far off.
      runXdskit(["watch", "cds", "missing", "--server", server.address, "--timeout", "1s"]),
      runXdskit(["watch", "cds", "echo", "--server", server.address, "--count", "2", "--timeout", "1500ms"]),
    ]);
    expect([nothing.code, nothing.stdout, nothing.stderr]).toEqual([
      1,
      "",
      "xdskit watch: timed out after 1s: no event\n",
    ]);
    expect(fewer.code).toBe(1);
    expect(fewer.stderr).toMatch(/^xdskit watch: timed out after 1500ms: [01] of 2 events\n$/);
  });

  it("a --timeout past Node's timer limit (30 days) waits for the events, watch and list alike", async () => {
    // Node alone fires a timer of more than 2^31-1 ms after 1 ms: both would time out at once.
    server.setResource(buildCluster({ name: "echo" }));
    const [watched, listed] = await Promise.all([
      runXdskit(["watch", "cds", "echo", "--server", server.address, "--count", "1", "--timeout", "43200m"]),
      runXdskit(["list", "cds", "--server", server.address, "--timeout", "43200m"]),
    ]);
    expect([watched.code, watched.stdout, watched.stderr]).toEqual([
      0,
      expect.stringMatching(/ echo: version \d+\n/),
      "",
    ]);
    expect([listed.code, listed.stdout, listed.stderr]).toEqual([0, "echo\n", ""]);
  });

  it("'*' prints every resource of the type as it arrives, and a removal as an error", async () => {
    server.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    const watch = startXdskit(["watch", "cds", "*", "--server", server.address, "--count", "3", "--json"]);
    await watch.waitFor(/"name":"b".*\n/);
    server.removeResource(CDS_TYPE_URL, "a");
    const { code, stdout } = await watch.finished;
    expect(code).toBe(1);
    const events = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map((e) => [e.event, e.name, e.code ?? e.resource?.name])).toEqual([
      ["resource", "a", "a"],
      ["resource", "b", "b"],
      ["error", "a", "NOT_FOUND"],
    ]);
    expect(events[2].message).toMatch(/^resource a was removed by the xDS server/);
  });

  it("--delta with --server watches over delta xDS", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const mark = server.hooks.mark();
    const { code, stdout } = await runXdskit([
      "watch",
      "cds",
      "echo",
      "--server",
      server.address,
      "--delta",
      "--count",
      "1",
    ]);
    expect([code, stdout]).toEqual([0, expect.stringMatching(/cds echo: version \d+\n/)]);
    const requests = server.hooks.requests().filter((r) => r.seq > mark && r.typeUrl === CDS_TYPE_URL);
    expect(requests.map((r) => r.kind)).toContain("delta");
    expect(requests.map((r) => r.kind)).not.toContain("sotw");
  });

  it("list prints the names of a type's resources (SotW and delta); an invalid one is named on stderr, exit 1", async () => {
    server.setResources([buildCluster({ name: "b" }), buildCluster({ name: "a" })]);
    const [sotw, delta] = await Promise.all([
      runXdskit(["list", "cds", "--server", server.address]),
      runXdskit(["list", CDS_TYPE_URL, "--server", server.address, "--delta", "--json"]),
    ]);
    expect([sotw.code, sotw.stdout, sotw.stderr]).toEqual([0, "a\nb\n", ""]);
    expect(delta.code).toBe(0);
    const answer = JSON.parse(delta.stdout);
    expect(answer.type).toBe(CDS_TYPE_URL);
    expect(
      answer.resources.map((r: { name: string; resource: { name: string } }) => [r.name, r.resource.name]),
    ).toEqual([
      ["a", "a"],
      ["b", "b"],
    ]);
    const bad = buildCluster({ name: "c" });
    bad.lbPolicy = 3; // RANDOM: gRPC clients reject it
    server.setResource(bad);
    const invalid = await runXdskit(["list", "cds", "--server", server.address]);
    expect([invalid.code, invalid.stdout]).toEqual([1, "a\nb\nc\n"]);
    expect(invalid.stderr).toMatch(/^c: invalid: .*lb_policy/);
  });

  it("an invalid bootstrap exits 1 and names the bad fields", async () => {
    const bootstrap = join(dir, "bad-bootstrap.json");
    writeFileSync(bootstrap, JSON.stringify({ xds_servers: [], node: {} }));
    const { code, stderr } = await runXdskit(["watch", "cds", "echo", "--bootstrap", bootstrap]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^xdskit watch: invalid bootstrap .*bad-bootstrap\.json:\n {2}\S/);
  });

  it("stays alive while the server is down, before and after its first answer", async () => {
    const down = await createManagementServer();
    try {
      down.setResource(buildCluster({ name: "echo" }));
      await down.stop();
      const watch = startXdskit(["watch", "cds", "echo", "--server", down.address]);
      // Nothing listens: the client reports it and retries with backoff (it used to exit with code 13 here).
      await watch.waitFor(/cds echo: error UNAVAILABLE: .*\n/);
      await down.start();
      await watch.waitFor(/cds echo: version \d+\n/);
      // Down again after an answer: an ambient error, the cluster stays in use; then a change once it is back.
      await down.stop();
      await watch.waitFor(/cds echo: ambient_error UNAVAILABLE: .*\n/);
      await down.start();
      down.setResource(buildCluster({ name: "echo", edsServiceName: "echo-back" }));
      await watch.waitFor(/"serviceName": "echo-back"/);
      expect((await watch.interrupt()).code).toBe(0);
    } finally {
      await down.close();
    }
  });
});
