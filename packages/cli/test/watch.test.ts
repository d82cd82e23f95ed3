// `xdskit watch` against a real control plane on 127.0.0.1. Steps per test:
//  1. an update, a change and a removal of one cluster, as text lines and proto JSON, then --count ends it (exit 0);
//  2. with --json and a bootstrap file: one JSON object per event, a NACKed resource as an error event;
//  3. a full type URL; Ctrl-C ends a watch with exit 0; a bad bootstrap exits 1 with its problems.

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

  it("prints each update of a cluster and its removal, then exits 0 after --count events", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const watch = startXdskit(["watch", "cds", "echo", "--server", server.address, "--count", "3"]);
    await watch.waitFor(/cds echo: version \d+\n/);
    const mark = server.hooks.mark();
    server.setResource(buildCluster({ name: "echo", edsServiceName: "echo-v2" }));
    await server.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", { after: mark });
    server.removeResource(CDS_TYPE_URL, "echo");
    const { code, stdout } = await watch.finished;
    expect(code).toBe(0);
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
    expect(code).toBe(0);
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

  it("takes a full type URL; Ctrl-C ends it with exit 0", async () => {
    server.setResource(buildCluster({ name: "echo" }));
    const watch = startXdskit(["watch", CDS_TYPE_URL, "echo", "--server", server.address]);
    await watch.waitFor(/ echo: version \d+\n/);
    const { code } = await watch.interrupt();
    expect(code).toBe(0);
  });

  it("an invalid bootstrap exits 1 and names the bad fields", async () => {
    const bootstrap = join(dir, "bad-bootstrap.json");
    writeFileSync(bootstrap, JSON.stringify({ xds_servers: [], node: {} }));
    const { code, stderr } = await runXdskit(["watch", "cds", "echo", "--bootstrap", bootstrap]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^xdskit watch: invalid bootstrap:\n {2}\S/);
  });
});
