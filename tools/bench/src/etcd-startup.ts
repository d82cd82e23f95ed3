// A replica starting on 100,000 resources in etcd, against the same resources loaded from a folder: `xdskit serve
// --etcd` and `xdskit serve <dir>` (the built CLI, a process each, as users run it), time from the process start to
// its "serving" line (it listens only then), and its RSS at that moment (/proc). Rounds alternate; medians.
// Not a test: nothing asserts on time.
//
//   node tools/bench/dist/etcd-startup.js [--resources 100000] [--rounds 3] [--quick]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { applyEtcdChange, connectEtcd, countTransactions, planEtcdChange } from "@xdskit/etcd-source";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { startEtcd } from "@xdskit/test-etcd";
import { clusterOf } from "./lib/etcd-replica.js";
import { now, numberOption, quantile } from "./lib/peer-process.js";
import { int, printTable, ratio } from "./lib/table.js";

const XDSKIT = join(dirname(createRequire(import.meta.url).resolve("@xdskit/cli/package.json")), "bin", "xdskit.js");

/** Runs `xdskit serve ...` until its "serving" line; its time to get there and its RSS then. */
function serveOnce(args: readonly string[]): Promise<{ ms: number; rss: number }> {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(process.execPath, [XDSKIT, "serve", ...args, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk;
    });
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk;
      if (!out.includes("serving ")) return;
      const ms = now() - started;
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      child.once("exit", () => resolve({ ms, rss }));
      child.kill("SIGINT");
    });
    child.once("exit", (code) => {
      if (!out.includes("serving ")) reject(new Error(`xdskit serve exited ${code} before serving:\n${err}`));
    });
  });
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const count = numberOption("resources", quick ? 10_000 : 100_000);
  const rounds = numberOption("rounds", quick ? 1 : 3);
  const etcd = await startEtcd();
  const conn = connectEtcd({ endpoints: [etcd.endpoint], requestTimeoutMs: 60_000 });
  const dir = mkdtempSync(join(tmpdir(), "xdskit-startup-"));
  try {
    const clusters = Array.from({ length: count }, (_, i) => clusterOf(i, i));
    const writeStarted = now();
    const plan = await planEtcdChange({ etcd: conn, resources: clusters.map((resource) => ({ resource })) });
    const transactions = countTransactions(plan);
    await applyEtcdChange(conn, plan);
    const writeMs = now() - writeStarted;
    const json = clusters.map((c) => ({
      "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      ...(toJson(ClusterSchema, c) as object),
    }));
    writeFileSync(join(dir, "clusters.json"), JSON.stringify(json));
    const fromEtcd: { ms: number; rss: number }[] = [];
    const fromFolder: { ms: number; rss: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      fromEtcd.push(await serveOnce(["--etcd", etcd.endpoint]));
      fromFolder.push(await serveOnce([dir]));
    }
    const median = (list: { ms: number; rss: number }[], key: "ms" | "rss") =>
      quantile(
        list.map((r) => r[key]),
        0.5,
      );
    const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
    printTable(
      `a replica starting on ${int(count)} clusters: xdskit serve --etcd against xdskit serve <dir> (one JSON file), from the process start to its "serving" line; median of ${rounds} (etcd written in ${int(writeMs)} ms, ${int(transactions)} transactions)`,
      ["", "from etcd", "from a folder", "ratio"],
      [
        [
          "time to serving",
          `${int(median(fromEtcd, "ms"))} ms`,
          `${int(median(fromFolder, "ms"))} ms`,
          ratio(median(fromEtcd, "ms") / median(fromFolder, "ms")),
        ],
        [
          "RSS when serving",
          mb(median(fromEtcd, "rss")),
          mb(median(fromFolder, "rss")),
          ratio(median(fromEtcd, "rss") / median(fromFolder, "rss")),
        ],
      ],
    );
  } finally {
    conn.close();
    await etcd.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
