// What `xdskit serve` says about the resources it serves and the load reported to it, on 127.0.0.1:
//  1. An unknown field is named by its path in the resource, with the field it is close to.
//  2. Every load is checked as a gRPC client checks it: a warning for a resource a client NACKs (with the field
//     path; a real client then NACKs it too) and for each reference to nothing (listener -> route configuration,
//     route -> cluster, cluster -> endpoints); --strict refuses such a load at start and on reload.
//  3. --loads, --loads-json and --verbose print the load reports a real LRS client sends.
//  4. Reload lines and the stop carry a timestamp; a port in use is one line naming --port.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLrsClient } from "@xdskit/orca-lrs-bridge";
import { clusterResourceType, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_YAML, follow, listenerJson } from "./support/resources.js";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const addressOf = (banner: string) => /on (127\.0\.0\.1:\d+) /.exec(banner)?.[1] ?? "";
const TIME = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

const ROUTES_YAML = `"@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
name: echo-route
virtualHosts:
  - name: all
    domains: ["*"]
    routes:
      - match: { prefix: "" }
        route:
          weightedClusters:
            clusters:
              - { name: echo, weight: 80 }
              - { name: echo-canary, weight: 20 }
`;

describe("xdskit serve checks and loads", () => {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-serve-checks-"));
  const clients: XdsClient[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names an unknown field by its path inside the resource, with the field it is close to", async () => {
    const files = mkdtempSync(join(dir, "unknown-"));
    writeFileSync(join(files, "eds.yaml"), CLUSTER_YAML.replace("lbEndpoints:", "lbEndpoint:"));
    const { code, stderr } = await runXdskit(["serve", files, "--port", "0"]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'eds.yaml[1]: endpoints[0].lbEndpoint: unknown field "lbEndpoint" in envoy.config.endpoint.v3.LocalityLbEndpoints (did you mean "lbEndpoints"?)',
    );
  });

  it("warns about what a gRPC client would NACK and about each reference to nothing; a client NACKs the same", async () => {
    const files = mkdtempSync(join(dir, "warn-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("type: EDS", "type: EDS\nlbPolicy: RANDOM"));
    writeFileSync(join(files, "routes.yaml"), ROUTES_YAML);
    writeFileSync(join(files, "listeners.json"), listenerJson("echo.test"));
    writeFileSync(
      join(files, "more.yaml"),
      `"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster\nname: lonely\ntype: EDS\nedsClusterConfig: { edsConfig: { ads: {} } }\n`,
    );
    // The control plane's own debug lines and the CLI's, from the environment (docs/logging.md).
    const serve = startXdskit(["serve", files, "--port", "0", "--debounce-ms", "50"], {
      XDSKIT_LOG: "warn,control-plane=debug,cli=debug",
    });
    const banner = await serve.waitFor(/^serving .*\n/);
    const warnings = await serve.waitFor(/lonely.*\n/, { from: "stderr" });
    expect(warnings).toMatch(
      new RegExp(
        `^${TIME} warning: cluster\\.yaml\\[0\\] Cluster echo: a gRPC client would NACK it: lb_policy: LB policy is not supported\\n`,
        "m",
      ),
    );
    expect(warnings).toContain(
      'warning: routes.yaml[0] RouteConfiguration echo-route: virtualHosts[0].routes[0].route.weightedClusters.clusters[1].name: no Cluster "echo-canary" is served\n',
    );
    expect(warnings).toContain(
      'warning: more.yaml[0] Cluster lonely: no endpoints: no ClusterLoadAssignment "lonely" is served\n',
    );
    // A real client rejects what the warning named, with the same words.
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: addressOf(banner), channel_creds: [{ type: "insecure" }] }],
        node: { id: "checked" },
      },
    });
    clients.push(client);
    const cluster = follow(client, clusterResourceType, "echo");
    const rejected = await cluster.until((r) => !r.ok);
    expect(rejected.ok ? "" : rejected.error.message).toContain("lb_policy: LB policy is not supported");
    await serve.waitFor(/NACK \[stream \d+, node checked\] Cluster: .*lb_policy: LB policy is not supported/, {
      from: "stderr",
    });

    expect(serve.stderr()).toMatch(
      new RegExp(
        `^${TIME} debug \\[cli\\] read 4 file\\(s\\) under .*: 5 resource\\(s\\), 0 problem\\(s\\), 3 warning\\(s\\) in `,
        "m",
      ),
    );
    expect(serve.stderr()).toMatch(new RegExp(`^${TIME} debug \\[control-plane\\] \\[ads #\\d+\\]`, "m"));

    // The listener's route configuration removed: the reload names the dangling listener, with its time.
    rmSync(join(files, "routes.yaml"));
    await serve.waitFor(new RegExp(`${TIME} reloaded: RouteConfiguration: removed echo-route\\n`));
    await serve.waitFor(
      /warning: listeners\.json\[0\] Listener echo\.test: apiListener\.apiListener\.rds\.routeConfigName: no RouteConfiguration "echo-route" is served\n/,
      { from: "stderr" },
    );
    const stopped = await serve.interrupt();
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(
      new RegExp(`${TIME} stopping: closing 1 client stream\\(s\\)\\n${TIME} stopped\\n$`),
    );
  });

  it("--strict refuses to start on such resources, and refuses a reload that brings them, serving the previous ones", async () => {
    const files = mkdtempSync(join(dir, "strict-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("type: EDS", "type: EDS\nlbPolicy: RANDOM"));
    const refused = await runXdskit(["serve", files, "--port", "0", "--strict"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^xdskit serve: cannot serve .* \(--strict\):\n {2}cluster\.yaml\[0\] Cluster echo: a gRPC client would NACK it: lb_policy/,
    );

    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const serve = startXdskit(["serve", files, "--port", "0", "--strict", "--debounce-ms", "50"]);
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [
          { server_uri: addressOf(await serve.waitFor(/^serving .*\n/)), channel_creds: [{ type: "insecure" }] },
        ],
        node: { id: "strict" },
      },
    });
    clients.push(client);
    const cluster = follow(client, clusterResourceType, "echo");
    await cluster.until((r) => r.ok);
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("type: EDS", "type: EDS\nlbPolicy: RANDOM"));
    const refusal = await serve.waitFor(/not reloaded \(--strict\).*\n.*\n/, { from: "stderr" });
    expect(refusal).toMatch(
      new RegExp(
        `${TIME} not reloaded \\(--strict\\), still serving the previous resources:\\n {2}cluster\\.yaml\\[0\\] Cluster echo: a gRPC client would NACK it`,
      ),
    );
    // Fixed again: that reload goes through; the client never saw the bad cluster.
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML.replace("type: EDS", "type: EDS\nlbPolicy: RING_HASH"));
    await serve.waitFor(/reloaded: Cluster: changed echo\n/);
    await cluster.until(() => cluster.results.length >= 2);
    expect(cluster.results.every((r) => r.ok)).toBe(true);
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("--loads, --loads-json and --verbose print the load reports of a real LRS client", async () => {
    const files = mkdtempSync(join(dir, "loads-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const serve = startXdskit(
      ["serve", files, "--port", "0", "--loads", "--loads-json", "--verbose"].concat(["--load-report-interval", "1s"]),
    );
    const address = addressOf(await serve.waitFor(/^serving .*\n/));
    const lrs = createLrsClient({ node: { id: "loads-node" } });
    const key = { server: { serverUri: address }, clusterName: "echo", propagation: { cpuUtilization: true } };
    const zoneA = lrs.localityStats({ ...key, locality: { region: "eu", zone: "a" } });
    const zoneB = lrs.localityStats({ ...key, locality: { region: "eu", zone: "b" } });
    for (let i = 0; i < 3; i++) {
      zoneA.callStarted();
      zoneA.callFinished("ok", { cpuUtilization: 0.5, memUtilization: 0, applicationUtilization: 0, namedMetrics: {} });
    }
    zoneB.callStarted();
    zoneB.callFinished("error");
    lrs.dropStats(key).callDropped("overload");
    zoneA.release();
    zoneB.release();
    // The client reports once the server has told it what and how often (every second here).
    const table = await serve.waitFor(/loads from node loads-node:\n(.*\n){4}/);
    await lrs.close();
    expect(table).toMatch(/ {2}node +cluster +locality +issued +ok +errors +in progress +metric +mean +calls\n/);
    expect(table).toMatch(/ {2}loads-node +echo +eu\/a +3 +3 +0 +0 +cpu_utilization +0\.500 +3\n/);
    expect(table).toMatch(/ {2}loads-node +echo +eu\/b +1 +0 +1 +0\n/);
    expect(table).toMatch(/ {2}loads-node +echo +dropped 1 +overload=1\n/);
    const json = serve
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    // The first report holds every call; later ones (every second until the client closes) hold what is new.
    expect(json[0]).toMatchObject({ node: "loads-node", clusters: [{ clusterName: "echo", totalDropped: 1 }] });
    expect(json[0].clusters[0].localities.map((l: { zone: string; issued: number }) => [l.zone, l.issued])).toEqual([
      ["a", 3],
      ["b", 1],
    ]);
    await serve.waitFor(
      /load report \[stream \d+, node loads-node\] echo: 4 calls, 1 errors, 1 dropped over \d+\.\d s\n/,
      { from: "stderr" },
    );
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("a port in use is one line that names --port", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    const files = mkdtempSync(join(dir, "port-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const result = await runXdskit(["serve", files, "--port", String(port)]);
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `xdskit serve: 127.0.0.1:${port} is already in use: stop what listens there, or choose --port (0: any free port)\n`,
    );
  });
});
