// `xdskit serve <dir>` with an @xdskit/xds-client watching what it serves, over 127.0.0.1. Steps:
//  1. YAML (two documents) and JSON files are served; the client gets the cluster and its endpoints.
//  2. A file changes: the reload says what changed, and the client gets the new endpoints; the unchanged cluster
//     keeps its version.
//  3. A bad file: the problem is printed with file and index, the previous resources stay served; fixing it reloads.
//  4. Ctrl-C: exit 0. Bad input at startup (a bad file, not a folder): exit 1 with the reason.
// Then each kind of save editors and tools make (a rename over the file, `sed -i`, then a write in place, which the
// first two used to make serve miss).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type XdsClient,
} from "@xdskit/xds-client";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_YAML, follow, listenerJson, ports } from "./support/resources.js";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const addressOf = (banner: string) => /on (127\.0\.0\.1:\d+) /.exec(banner)?.[1] ?? "";

function clientOf(address: string): XdsClient {
  return createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
  });
}

describe("xdskit serve", () => {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-serve-"));
  const clients: XdsClient[] = [];

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves YAML and JSON files, says what each reload changed, keeps serving through a bad file, exits 0 on Ctrl-C", async () => {
    const files = mkdtempSync(join(dir, "files-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    writeFileSync(join(files, "listener.json"), listenerJson("echo.test"));
    const serve = startXdskit(["serve", files, "--port", "0", "--debounce-ms", "50"]);
    const banner = await serve.waitFor(/^serving .*\n/);
    expect(banner).toMatch(
      /^serving .* on 127\.0\.0\.1:\d+ \(cleartext; ADS, CSDS, health\): Cluster 1, ClusterLoadAssignment 1, Listener 1\n$/,
    );
    const client = clientOf(addressOf(banner));
    clients.push(client);
    const cluster = follow(client, clusterResourceType, "echo");
    const endpoints = follow<EndpointUpdate>(client, endpointResourceType, "echo");
    const firstCluster = await cluster.until((r) => r.ok);
    expect(ports(await endpoints.until((r) => r.ok))).toEqual([50051]);

    // 2. New endpoints: the reload names them; the cluster is unchanged and is not sent again.
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("50051", "50052"));
    await serve.waitFor(/reloaded: ClusterLoadAssignment: changed echo\n/);
    expect(ports(await endpoints.until((r) => ports(r)[0] === 50052))).toEqual([50052]);
    expect(cluster.results).toEqual([firstCluster]);

    // 3. A bad file: nothing changes for the client; fixing it reloads, naming what was added and removed.
    const bad = { "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "x", nope: 1 };
    writeFileSync(join(files, "more.json"), JSON.stringify(bad));
    const problems = await serve.waitFor(/not reloaded.*\n {2}more\.json\[0\]: .*\n/s, { from: "stderr" });
    expect(problems).toContain("nope");
    writeFileSync(join(files, "more.json"), JSON.stringify({ ...bad, nope: undefined }));
    writeFileSync(join(files, "listener.json"), listenerJson("echo2.test"));
    await serve.waitFor(/reloaded: Cluster: added x\. Listener: added echo2\.test; removed echo\.test\n/);
    expect(ports(endpoints.results.at(-1)!)).toEqual([50052]);

    const { code } = await serve.interrupt();
    expect(code).toBe(0);
  });

  it("reloads after every kind of save: renamed over the file, sed -i, then written in place", async () => {
    const files = mkdtempSync(join(dir, "saves-"));
    const file = join(files, "cluster.yaml");
    writeFileSync(file, CLUSTER_YAML);
    const serve = startXdskit(["serve", files, "--port", "0", "--debounce-ms", "50"]);
    const client = clientOf(addressOf(await serve.waitFor(/^serving .*\n/)));
    clients.push(client);
    const endpoints = follow<EndpointUpdate>(client, endpointResourceType, "echo");
    await endpoints.until((r) => ports(r)[0] === 50051);
    let reloads = 0;
    const saved = async (port: number) => {
      reloads++;
      await serve.waitFor(new RegExp(`(reloaded: ClusterLoadAssignment: changed echo\\n.*){${reloads}}`, "s"));
      await endpoints.until((r) => ports(r)[0] === port);
    };
    // An editor's save: a new file renamed over the old one (a new inode).
    writeFileSync(join(files, ".cluster.yaml.tmp"), CLUSTER_YAML.replace("50051", "50061"));
    renameSync(join(files, ".cluster.yaml.tmp"), file);
    await saved(50061);
    // sed -i: the same, with sed's temporary file.
    expect(spawnSync("sed", ["-i", "s/50061/50062/", file]).status).toBe(0);
    await saved(50062);
    // In place, on the inode the renames left: what a watch of the file itself no longer sees.
    writeFileSync(file, CLUSTER_YAML.replace("50051", "50063"));
    await saved(50063);
    // A new subfolder with a file in it.
    const sub = join(files, "more");
    mkdirSync(sub);
    writeFileSync(
      join(sub, "x.json"),
      JSON.stringify({ "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "x" }),
    );
    await serve.waitFor(/reloaded: Cluster: added x\n/);
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("exits 1 when a file is bad at startup or the folder does not exist", async () => {
    const bad = mkdtempSync(join(dir, "bad-"));
    writeFileSync(join(bad, "a.yaml"), '"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster\nname: [1, 2]\n');
    const [started, missing] = await Promise.all([
      runXdskit(["serve", bad, "--port", "0"]),
      runXdskit(["serve", join(dir, "nope"), "--port", "0"]),
    ]);
    expect(started.code).toBe(1);
    expect(started.stderr).toMatch(/^xdskit serve: cannot serve .*:\n {2}a\.yaml\[0\]: /);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/is not a folder/);
  });
});
