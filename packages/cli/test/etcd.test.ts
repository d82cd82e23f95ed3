// `xdskit apply`, `get` and `serve --etcd` against a real etcd (tools/test-etcd), as a user runs them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLrsClient } from "@xdskit/orca-lrs-bridge";
import { createTestCa, issueLocalhost, writeCertificate } from "@xdskit/test-pki";
import {
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type XdsClient,
} from "@xdskit/xds-client";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { freePort, hasEtcd, testEtcd } from "./support/etcd.js";
import { CLUSTER_YAML, follow, listenerJson, ports } from "./support/resources.js";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const root = mkdtempSync(join(tmpdir(), "xdskit-etcd-cli-"));
const clients: XdsClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  killAll();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
/** A folder holding `files` (name → content). */
function folder(files: Record<string, string>): string {
  const dir = join(root, `f${folders++}`);
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function clientOf(address: string): XdsClient {
  const client = createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
  });
  clients.push(client);
  return client;
}

const addressOf = (banner: string) => /on (127\.0\.0\.1:\d+) /.exec(banner)?.[1] ?? "";
const cluster = (name: string) =>
  JSON.stringify({
    "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    name,
    type: "EDS",
    edsClusterConfig: { edsConfig: { ads: {} } },
  });

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

describe.skipIf(!hasEtcd)("xdskit and etcd", () => {
  it("apply writes a folder as one change, get reads it back; a bad file is refused and nothing written", async () => {
    // 1. --dry-run says what would change and writes nothing; apply writes it; a second apply changes nothing.
    // 2. get prints the resources as the folder had them (proto JSON with @type).
    // 3. A bad file: apply refuses as serve does (file[index]: reason) and writes nothing.
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    const files = folder({ "cluster.yaml": CLUSTER_YAML, "listener.json": listenerJson("echo.test") });
    // Independent commands run at once: each is a process that takes seconds to start on a loaded machine.
    const [dry, none] = await Promise.all([
      runXdskit(["apply", files, ...e, "--dry-run"]),
      runXdskit(["get", "cds", ...e]),
    ]);
    expect([dry.code, dry.stdout]).toEqual([
      0,
      "dry run, nothing written: Cluster: added echo. ClusterLoadAssignment: added echo. Listener: added echo.test (/xds at revision 1)\n",
    ]);
    expect(none.stdout).toBe("[]\n");
    const applied = await runXdskit(["apply", files, ...e]);
    expect([applied.code, applied.stdout]).toEqual([
      0,
      "applied: Cluster: added echo. ClusterLoadAssignment: added echo. Listener: added echo.test (/xds at revision 2)\n",
    ]);
    const [again, got, missing] = await Promise.all([
      runXdskit(["apply", files, ...e]),
      runXdskit(["get", "cds", "echo", ...e]),
      runXdskit(["get", "cds", "nope", ...e]),
    ]);
    expect(again.stdout).toBe("nothing changed (/xds at revision 2)\n");
    expect(JSON.parse(got.stdout)).toEqual({
      "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      name: "echo",
      type: "EDS",
      edsClusterConfig: { edsConfig: { ads: {} } },
    });
    expect(missing).toMatchObject({
      code: 1,
      stderr: "xdskit get: no Cluster named nope under /xds/\n",
    });

    writeFileSync(join(files, "bad.json"), "{");
    const [bad, badDry] = await Promise.all([
      runXdskit(["apply", files, ...e]),
      runXdskit(["apply", files, ...e, "--dry-run"]),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(new RegExp(`^xdskit apply: cannot apply ${files}:\\n  bad.json: .*JSON`));
    expect(badDry.code).toBe(1);
    expect((await runXdskit(["get", "cds", ...e])).stdout).toContain('"name": "echo"');
    // Ten CLI processes in five steps: at a load average of 16 each took over 3 s to start and finish.
  }, 90_000);

  it("serve --etcd serves what apply wrote and follows each apply", async () => {
    // The banner counts what was read; an apply of new endpoints is printed by serve and reaches the client, the
    // unchanged cluster is not sent again.
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    const files = folder({ "cluster.yaml": CLUSTER_YAML, "listener.json": listenerJson("echo.test") });
    expect((await runXdskit(["apply", files, ...e])).code).toBe(0);
    const serve = startXdskit(["serve", ...e, "--port", "0"]);
    const banner = await serve.waitFor(/^serving .*\n/);
    expect(banner).toMatch(
      new RegExp(
        `^serving etcd ${etcd.endpoint} /xds/ at revision 2 on 127\\.0\\.0\\.1:\\d+ \\(cleartext; ADS, CSDS, health\\): Cluster 1, ClusterLoadAssignment 1, Listener 1\\n$`,
      ),
    );
    const client = clientOf(addressOf(banner));
    const clusters = follow(client, clusterResourceType, "echo");
    const endpoints = follow<EndpointUpdate>(client, endpointResourceType, "echo");
    await clusters.until((r) => r.ok);
    expect(ports(await endpoints.until((r) => r.ok))).toEqual([50051]);

    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("50051", "50052"));
    expect((await runXdskit(["apply", files, ...e])).stdout).toBe(
      "applied: ClusterLoadAssignment: changed echo (/xds at revision 3)\n",
    );
    await serve.waitFor(/^revision 3: ClusterLoadAssignment: changed echo\n/m);
    expect(ports(await endpoints.until((r) => ports(r)[0] === 50052))).toEqual([50052]);
    expect(clusters.results).toHaveLength(1);
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("apply checks a folder as serve does: the same warnings, and with --strict nothing is written", async () => {
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    // A cluster a gRPC client NACKs, and a listener whose route configuration is not in the folder.
    const files = folder({
      "cluster.yaml": CLUSTER_YAML.replace("type: EDS", "type: EDS\nlbPolicy: RANDOM"),
      "listener.json": listenerJson("echo.test"),
    });
    const served = await runXdskit(["serve", files, "--port", "0", "--strict"]);
    expect(served.code).toBe(1);
    const header = `xdskit serve: cannot serve ${files} (--strict):\n`;
    expect(served.stderr.startsWith(header)).toBe(true);
    const lines = served.stderr.slice(header.length);
    expect(lines).toMatch(/^ {2}cluster\.yaml\[0\] Cluster echo: a gRPC client would NACK it: lb_policy: /m);
    expect(lines).toContain(
      '  listener.json[0] Listener echo.test: apiListener.apiListener.rds.routeConfigName: no RouteConfiguration "echo-route" is served\n',
    );

    const strict = await runXdskit(["apply", files, ...e, "--strict"]);
    expect([strict.code, strict.stdout, strict.stderr]).toEqual([
      1,
      "",
      `xdskit apply: cannot apply ${files} (--strict), nothing written:\n${lines}`,
    ]);
    expect((await runXdskit(["get", "lds", ...e])).stdout).toBe("[]\n");

    const applied = await runXdskit(["apply", files, ...e]);
    expect([applied.code, applied.stderr]).toEqual([0, lines.replace(/^ {2}/gm, "warning: ")]);
    expect(applied.stdout).toBe(
      "applied: Cluster: added echo. ClusterLoadAssignment: added echo. Listener: added echo.test (/xds at revision 2)\n",
    );
  });

  it("serve --etcd waits for etcd, serving nothing; keeps serving when etcd is lost, and follows it again", async () => {
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    await runXdskit(["apply", folder({ "cluster.yaml": CLUSTER_YAML }), ...e]);
    await etcd.stop();
    const port = await freePort();
    const serve = startXdskit(["serve", ...e, "--port", String(port)]);
    await serve.waitFor(new RegExp(`waiting for etcd at ${etcd.endpoint}: .*ECONNREFUSED`), { from: "stderr" });
    expect(await refused(port)).toBe(true);
    expect(serve.stdout()).toBe("");

    await etcd.start();
    await serve.waitFor(/^serving etcd .* at revision 2 /);
    const client = clientOf(`127.0.0.1:${port}`);
    const endpoints = follow<EndpointUpdate>(client, endpointResourceType, "echo");
    expect(ports(await endpoints.until((r) => r.ok))).toEqual([50051]);

    await etcd.kill();
    await serve.waitFor(/etcd lost \(.*\); still serving revision 2\n/, { from: "stderr" });
    // A client arriving now is served the revision read.
    const late = follow<EndpointUpdate>(clientOf(`127.0.0.1:${port}`), endpointResourceType, "echo");
    expect(ports(await late.until((r) => r.ok))).toEqual([50051]);

    await etcd.start();
    await serve.waitFor(/etcd back; serving revision 2 and following it\n/, { from: "stderr", timeoutMs: 15_000 });
    await runXdskit(["apply", folder({ "cluster.yaml": CLUSTER_YAML.replace("50051", "50053") }), ...e]);
    expect(ports(await endpoints.until((r) => ports(r)[0] === 50053))).toEqual([50053]);
    expect(endpoints.results.every((r) => r.ok)).toBe(true);
    expect((await serve.interrupt()).code).toBe(0);
  }, 90_000);

  it("serve --etcd prints load reports (--loads-json), says when it stops, names --port when the port is taken, and logs its source as XDSKIT_LOG says", async () => {
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    await runXdskit(["apply", folder({ "cluster.yaml": CLUSTER_YAML }), ...e]);
    expect((await runXdskit(["serve", ...e, "--strict"])).code).toBe(2);
    const serve = startXdskit(["serve", ...e, "--port", "0", "--loads-json", "--load-report-interval", "1s"], {
      XDSKIT_LOG: "warn,etcd-source=info",
    });
    const address = addressOf(await serve.waitFor(/^serving .*\n/));
    expect(serve.stderr()).toMatch(/ info \[etcd-source\] loaded 2 resources \(\d+ keys\) at revision 2\n/);

    const taken = await runXdskit(["serve", ...e, "--port", address.split(":")[1]!]);
    expect([taken.code, taken.stderr]).toEqual([
      1,
      `xdskit serve: ${address} is already in use: stop what listens there, or choose --port (0: any free port)\n`,
    ]);

    const lrs = createLrsClient({ node: { id: "replica-loads" } });
    const stats = lrs.localityStats({ server: { serverUri: address }, clusterName: "echo", locality: { zone: "a" } });
    stats.callStarted();
    stats.callFinished("ok");
    stats.release();
    const line = await serve.waitFor(/^\{.*"replica-loads".*\n/m);
    await lrs.close();
    expect(JSON.parse(line.trimEnd().split("\n").at(-1)!)).toMatchObject({
      node: "replica-loads",
      clusters: [{ clusterName: "echo" }],
    });

    const stopped = await serve.interrupt();
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/\dZ stopping: closing \d+ client stream\(s\)\n\S+Z stopped\n$/);
  });

  it("says when etcd refuses the credentials, and works with the right ones", async () => {
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    const files = folder({ "a.json": cluster("a") });
    // etcd's own set-up of authentication, through etcd-source's client.
    const { connectEtcd } = await import("@xdskit/etcd-source");
    const admin = connectEtcd({ endpoints: [etcd.endpoint] });
    await admin.auth.userAdd({ name: "root", password: "right" });
    await admin.auth.userGrantRole({ user: "root", role: "root" });
    await admin.auth.authEnable({});
    admin.close();

    // The three refusals are independent: one CLI process each, at once.
    const [serve, apply, anonymous] = await Promise.all([
      runXdskit(["serve", ...e, "--user", "root:wrong", "--port", "0"]),
      runXdskit(["apply", files, ...e, "--user", "root:wrong"]),
      runXdskit(["apply", files, ...e]),
    ]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(
      new RegExp(
        `^xdskit serve: cannot serve from etcd at ${etcd.endpoint}: etcd .*: the user name or password was refused`,
      ),
    );
    expect([apply.code, apply.stderr]).toEqual([
      1,
      // After the warning that cluster a has no endpoints.
      expect.stringMatching(/^xdskit apply: etcd .*: the user name or password was refused/m),
    ]);
    expect(anonymous.stderr).toMatch(/etcd requires authentication: give a user and password/);
    expect((await runXdskit(["apply", files, ...e, "--user", "root", "--password", "right"])).code).toBe(0);
    const got = await runXdskit(["get", "cds", "a", ...e, "--user", "root"], { ETCDCTL_PASSWORD: "right" });
    expect([got.code, JSON.parse(got.stdout).name]).toEqual([0, "a"]);
    // Its own etcd with authentication set up, then five CLI processes: 9.9 s in a quiet npm test, a third of the
    // package's 30 s; 90 s as its siblings that start as many processes.
  }, 90_000);

  it("refuses a value over etcd's request size, naming it, and writes nothing", async () => {
    const etcd = await testEtcd({ maxRequestBytes: 64 * 1024 });
    const e = ["--etcd", etcd.endpoint];
    const endpoints = Array.from({ length: 6000 }, (_, i) => ({
      endpoint: { address: { socketAddress: { address: `10.0.${i >> 8}.${i & 255}`, portValue: 80 } } },
    }));
    const huge = JSON.stringify({
      "@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
      clusterName: "huge",
      endpoints: [{ lbEndpoints: endpoints }],
    });
    const files = folder({ "a.json": cluster("a"), "huge.json": huge });
    const byEtcd = await runXdskit(["apply", files, ...e]);
    expect(byEtcd.code).toBe(1);
    expect(byEtcd.stderr).toMatch(
      /the request is larger than etcd accepts \(its --max-request-bytes\).*; nothing was written\n$/,
    );
    const byUs = await runXdskit(["apply", files, ...e, "--max-request-bytes", String(64 * 1024)]);
    expect(byUs.code).toBe(1);
    expect(byUs.stderr).toMatch(
      /^xdskit apply: \/xds\/resources\/envoy.config.endpoint.v3.ClusterLoadAssignment\/huge: \d+ bytes, more than one etcd request can carry/m,
    );
    expect((await runXdskit(["get", "cds", ...e])).stdout).toBe("[]\n");
  });

  it("of two applies at once, one wins whole and the other is told", async () => {
    const etcd = await testEtcd();
    const e = ["--etcd", etcd.endpoint];
    const one = folder({ "c.json": JSON.stringify([JSON.parse(cluster("one-a")), JSON.parse(cluster("one-b"))]) });
    const two = folder({ "c.json": JSON.stringify([JSON.parse(cluster("two-a")), JSON.parse(cluster("two-b"))]) });
    const names = async () =>
      (JSON.parse((await runXdskit(["get", "cds", ...e])).stdout) as { name: string }[]).map((c) => c.name).sort();

    // Both reviewed at the same revision: the first to write wins, the second is told and writes nothing.
    const dry = await runXdskit(["apply", one, ...e, "--dry-run"]);
    const revision = /at revision (\d+)\)/.exec(dry.stdout)?.[1] ?? "";
    expect((await runXdskit(["apply", one, ...e, "--if-revision", revision])).code).toBe(0);
    const lost = await runXdskit(["apply", two, ...e, "--if-revision", revision]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(
      new RegExp(
        `^xdskit apply: another writer changed /xds/ after revision ${revision} \\(.*"writer":"xdskit apply on .*\\); nothing of this change was written: read it again and retry\\n$`,
        "m",
      ),
    );
    expect(await names()).toEqual(["one-a", "one-b"]);

    // Truly at once: whatever the timing, the prefix ends as one folder, whole; a loser says why.
    const racing = await Promise.all([runXdskit(["apply", two, ...e]), runXdskit(["apply", one, ...e])]);
    expect(racing.some((r) => r.code === 0)).toBe(true);
    for (const r of racing.filter((r) => r.code !== 0)) expect(r.stderr).toMatch(/another writer changed \/xds\//);
    expect([
      ["one-a", "one-b"],
      ["two-a", "two-b"],
    ]).toContainEqual(await names());
  });

  it("talks TLS to etcd with --cacert, --cert and --key", async () => {
    const ca = createTestCa();
    const dir = mkdtempSync(join(root, "tls-"));
    writeFileSync(join(dir, "ca.pem"), ca.cert);
    const server = writeCertificate(dir, "etcd", issueLocalhost(ca));
    const client = writeCertificate(dir, "client", ca.issue({ commonName: "root" }));
    const etcd = await testEtcd({
      tls: { certFile: server.certFile, keyFile: server.keyFile, clientCaFile: join(dir, "ca.pem") },
    });
    const tls = ["--cacert", join(dir, "ca.pem"), "--cert", client.certFile, "--key", client.keyFile];
    const files = folder({ "a.json": cluster("a") });
    const applied = await runXdskit(["apply", files, "--etcd", etcd.endpoint, ...tls]);
    expect([applied.code, applied.stdout]).toEqual([0, "applied: Cluster: added a (/xds at revision 2)\n"]);
    const noCert = await runXdskit(["get", "cds", "--etcd", etcd.endpoint, "--cacert", join(dir, "ca.pem")]);
    expect(noCert.code).toBe(1);
    expect(noCert.stderr).toMatch(/^xdskit get: etcd \(https:\/\/127\.0\.0\.1:\d+\): /);
    const got = await runXdskit(["get", "cds", "--etcd", `https://${etcd.endpoint}`, ...tls]);
    expect(JSON.parse(got.stdout)).toHaveLength(1);
  });
});
