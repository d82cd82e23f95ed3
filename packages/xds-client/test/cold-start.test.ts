// What importing and creating a client loads, checked on the build in a fresh Node, as a user's process loads it:
// the client's core only; the protocol module, a built-in type's decoder and the transport when first used
// (docs/architecture.md#what-loads-when). Node's own debug log of its ES module loader (NODE_DEBUG=esm) names every
// module it loads, `import`ed or `require`d; the child marks where each step starts, and each step must load what
// it needs (so the log cannot go silent unnoticed).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toBinary } from "@bufbuild/protobuf";
import { buildCluster, createManagementServer } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs in the child (cwd: this package, so "@xdskit/xds-client" is the build). Steps marked on stderr. */
const CHILD = `
const [port, clusterBase64] = process.argv.slice(1);
const step = (name) => process.stderr.write("\\n@@step " + name + "\\n");
const bootstrap = (uri) => ({
  xds_servers: [{ server_uri: uri, channel_creds: [{ type: "insecure" }] }],
  node: { id: "cold-node" },
});
const watcher = (onResource) => ({
  onResourceChanged: (result) => { if (result.ok) onResource(result.resource); },
  onAmbientError: () => {},
});
const out = {};

step("create");
const xds = await import("@xdskit/xds-client");
const first = xds.createXdsClient({ bootstrap: bootstrap("127.0.0.1:1"), env: {} });

step("watch-and-close");
first.watch(xds.clusterResourceType, "cluster-0", watcher(() => {}));
await first.close();
for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));

step("csds-and-decode");
const second = xds.createXdsClient({ bootstrap: bootstrap("127.0.0.1:1"), env: {} });
out.csdsNode = second.dumpResources().node?.id;
const any = { $typeName: "google.protobuf.Any", typeUrl: xds.clusterResourceType.typeUrl, value: Buffer.from(clusterBase64, "base64") };
const decoded = xds.clusterResourceType.decode(any, { server: second.bootstrap.xdsServers[0], bootstrap: second.bootstrap, features: second.features });
out.decoded = decoded.ok ? decoded.name : decoded.error;
await second.close();

step("first-resource");
const third = xds.createXdsClient({ bootstrap: bootstrap("127.0.0.1:" + port), env: {} });
out.delivered = await new Promise((resolve) => third.watch(xds.clusterResourceType, "cluster-0", watcher((c) => resolve(c.name))));
await third.close();
step("end");
process.stdout.write(JSON.stringify(out));
`;

interface Run {
  readonly out: Record<string, unknown>;
  /** Step → the URLs of the modules Node loaded during it. */
  readonly loaded: Map<string, string[]>;
}

function runChild(port: number, clusterBase64: string): Promise<Run> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, port.toString(), clusterBase64], {
    cwd: packageDir,
    env: { ...process.env, NODE_DEBUG: "esm" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`child exited with ${code}: ${stderr.slice(-2000)}`));
      const loaded = new Map<string, string[]>();
      let current: string[] | undefined;
      for (const line of stderr.split("\n")) {
        const step = /^@@step (\S+)/.exec(line);
        if (step) {
          current = [];
          loaded.set(step[1]!, current);
          continue;
        }
        // Logged for every module the loader records, whether `import`ed or `require`d.
        const module = /Storing (\S+) .*in ModuleLoadMap/.exec(line);
        if (module && current && !current.includes(module[1]!)) current.push(module[1]!);
      }
      resolve({ out: JSON.parse(stdout) as Record<string, unknown>, loaded });
    }),
  );
}

/** The loaded modules of a step matching any of `patterns`, to read in a failure message. */
const matching = (urls: readonly string[] | undefined, ...patterns: RegExp[]) =>
  (urls ?? []).filter((url) => patterns.some((p) => p.test(url)));

const PROTOBUF = /@bufbuild\/protobuf/;
const PROTOS = /packages\/protos\/|@xdskit\/protos/;
const MATCHER = /constraint-matcher/;
const CONNECT = /@connectrpc/;
const PROTOCOL = /xds-client\/dist\/protocol\/protocol\.js$/;
const TRANSPORT = /xds-client\/dist\/transport\/transport-http2\.js$/;
const DECODERS = /xds-client\/dist\/resources\//;

describe("cold start, in a fresh Node on the build", () => {
  let server: Awaited<ReturnType<typeof createManagementServer>>;
  let run: Run;

  beforeAll(async () => {
    server = await createManagementServer({ host: "127.0.0.1", port: 0 });
    const cluster = buildCluster({ name: "cluster-0", edsServiceName: "eds-0" });
    server.setResources([cluster]);
    run = await runChild(server.port, Buffer.from(toBinary(ClusterSchema, cluster)).toString("base64"));
  });
  afterAll(() => server?.close());

  it("import + createXdsClient load the client's core: no protobuf-es, envoy messages, matcher or transport", () => {
    const create = run.loaded.get("create");
    expect(matching(create, /xds-client\/dist\/client\/xds-client\.js$/)).toHaveLength(1);
    expect(matching(create, PROTOBUF, PROTOS, MATCHER, CONNECT, PROTOCOL, TRANSPORT, DECODERS)).toEqual([]);
  });

  it("watch() then close() in the same tick load nothing more", () => {
    expect(run.loaded.get("watch-and-close")).toEqual([]);
  });

  it("CSDS before any call and a built-in type's decode called directly load what they need, at once", () => {
    expect(run.out.csdsNode).toBe("cold-node");
    expect(run.out.decoded).toBe("cluster-0");
    const step = run.loaded.get("csds-and-decode");
    expect(matching(step, PROTOCOL)).toHaveLength(1);
    expect(matching(step, /xds-client\/dist\/resources\/cluster\.js$/)).toHaveLength(1);
    expect(matching(step, CONNECT, TRANSPORT)).toEqual([]);
  });

  it("the first watch on a real server loads the transport and delivers the resource", () => {
    expect(run.out.delivered).toBe("cluster-0");
    expect(matching(run.loaded.get("first-resource"), TRANSPORT)).toHaveLength(1);
    expect(matching(run.loaded.get("first-resource"), CONNECT).length).toBeGreaterThan(0);
  });
}, 60_000);
