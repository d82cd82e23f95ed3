// `xdskit serve <dir>` with an @xdskit/xds-client watching what it serves, over 127.0.0.1. Steps:
//  1. YAML (two documents) and JSON files are served; the client gets the cluster and its endpoints.
//  2. A file changes: "reloaded", and the client gets the new endpoints; the unchanged cluster keeps its version.
//  3. A bad file: the problem is printed with file and index, the previous resources stay served; fixing it reloads.
//  4. Ctrl-C: exit 0. Bad input at startup (a bad file, not a folder): exit 1 with the reason.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type ResourceResult,
  type XdsClient,
} from "@xdskit/xds-client";
import { afterAll, describe, expect, it } from "vitest";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const CLUSTER_YAML = `# the cluster and its endpoints, as two YAML documents
"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
name: echo
type: EDS
edsClusterConfig: { edsConfig: { ads: {} } }
---
"@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
clusterName: echo
endpoints:
  - locality: { zone: a }
    loadBalancingWeight: 1
    lbEndpoints:
      - endpoint: { address: { socketAddress: { address: 127.0.0.1, portValue: 50051 } } }
`;

function listenerJson(name: string) {
  return JSON.stringify([
    {
      "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
      name,
      apiListener: {
        apiListener: {
          "@type":
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
          rds: { configSource: { ads: {} }, routeConfigName: "echo-route" },
          httpFilters: [
            {
              name: "router",
              typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
            },
          ],
        },
      },
    },
  ]);
}

/** The latest result of a watch, and a way to wait for one that satisfies a check. */
function follow<T>(client: XdsClient, type: Parameters<XdsClient["watch"]>[0], name: string) {
  const results: ResourceResult<T>[] = [];
  const waiters = new Set<() => void>();
  client.watch(type, name, {
    onResourceChanged(result) {
      results.push(result as ResourceResult<T>);
      for (const waiter of waiters) waiter();
    },
    onAmbientError: () => {},
  });
  return {
    results,
    until: (check: (result: ResourceResult<T>) => boolean) =>
      new Promise<ResourceResult<T>>((resolve) => {
        const test = () => {
          const last = results.at(-1);
          if (last && check(last)) {
            waiters.delete(test);
            resolve(last);
          }
        };
        waiters.add(test);
        test();
      }),
  };
}

const ports = (result: ResourceResult<EndpointUpdate>) =>
  result.ok
    ? result.resource.priorities.flatMap((p) =>
        p.localities.flatMap((l) => l.endpoints.map((e) => e.addresses[0]?.port)),
      )
    : [];

describe("xdskit serve", () => {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-serve-"));
  let client: XdsClient | undefined;

  afterAll(async () => {
    await client?.close();
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves YAML and JSON files, reloads on change, keeps serving through a bad file, exits 0 on Ctrl-C", async () => {
    writeFileSync(join(dir, "cluster.yaml"), CLUSTER_YAML);
    writeFileSync(join(dir, "listener.json"), listenerJson("echo.test"));
    const serve = startXdskit(["serve", dir, "--port", "0", "--debounce-ms", "50"]);
    const banner = await serve.waitFor(/^serving .* on 127\.0\.0\.1:\d+: .*\n/);
    expect(banner).toMatch(/: Cluster 1, ClusterLoadAssignment 1, Listener 1\n$/);
    const address = /on (127\.0\.0\.1:\d+):/.exec(banner)?.[1] ?? "";

    client = createXdsClient({
      bootstrap: { xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
    });
    const cluster = follow(client, clusterResourceType, "echo");
    const endpoints = follow<EndpointUpdate>(client, endpointResourceType, "echo");
    const firstCluster = await cluster.until((r) => r.ok);
    expect(ports(await endpoints.until((r) => r.ok))).toEqual([50051]);

    // 2. New endpoints: reloaded; the cluster is unchanged and is not sent again.
    writeFileSync(join(dir, "cluster.yaml"), CLUSTER_YAML.replace("50051", "50052"));
    await serve.waitFor(/reloaded: Cluster 1, ClusterLoadAssignment 1, Listener 1\n/);
    expect(ports(await endpoints.until((r) => ports(r)[0] === 50052))).toEqual([50052]);
    expect(cluster.results).toEqual([firstCluster]);

    // 3. A bad file: nothing changes for the client; fixing it reloads.
    writeFileSync(
      join(dir, "more.json"),
      JSON.stringify({ "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "x", nope: 1 }),
    );
    const problems = await serve.waitFor(/not reloaded.*\n {2}more\.json\[0\]: .*\n/s, { from: "stderr" });
    expect(problems).toContain("nope");
    writeFileSync(
      join(dir, "more.json"),
      JSON.stringify({ "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", name: "x" }),
    );
    await serve.waitFor(/reloaded: Cluster 2, ClusterLoadAssignment 1, Listener 1\n/);
    expect(ports(endpoints.results.at(-1)!)).toEqual([50052]);

    const { code } = await serve.interrupt();
    expect(code).toBe(0);
  });

  it("exits 1 when a file is bad at startup or the folder does not exist", async () => {
    const bad = mkdtempSync(join(dir, "bad-"));
    writeFileSync(join(bad, "a.yaml"), '"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster\nname: [1, 2]\n');
    const started = await runXdskit(["serve", bad, "--port", "0"]);
    expect(started.code).toBe(1);
    expect(started.stderr).toMatch(/^xdskit serve: cannot serve .*:\n {2}a\.yaml\[0\]: /);
    const missing = await runXdskit(["serve", join(dir, "nope"), "--port", "0"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/is not a folder/);
  });
});
