// A real etcd for tests: the `etcd` binary on 127.0.0.1, free ports, a temporary data directory, killed with the
// test process whatever way it ends.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The command that installs etcd on Debian and Ubuntu (the `etcd-server` package, 3.4). */
export const ETCD_INSTALL_COMMAND = "apt-get install -y etcd-server";

/** The etcd binary: `XDSKIT_ETCD`, or `etcd` on PATH; undefined when there is none. */
export function etcdBinary(): string | undefined {
  const named = process.env.XDSKIT_ETCD;
  const candidates = named
    ? [named]
    : (process.env.PATH ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, "etcd"));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
}

/** Whether the etcd tests can run here. */
export function etcdAvailable(): boolean {
  return etcdBinary() !== undefined;
}

export interface EtcdTlsFiles {
  /** The server's certificate and key (PEM files). */
  readonly certFile: string;
  readonly keyFile: string;
  /** Require client certificates signed by this CA. */
  readonly clientCaFile?: string;
}

export interface StartEtcdOptions {
  /** etcd's `--max-request-bytes` (its default: 1.5 MiB). */
  readonly maxRequestBytes?: number;
  /** etcd's `--max-txn-ops` (its default: 128). */
  readonly maxTxnOps?: number;
  /** Serve clients over TLS. */
  readonly tls?: EtcdTlsFiles;
  /** More command-line flags. */
  readonly args?: readonly string[];
  /** How long to wait for etcd to serve clients. Default 30 s (a loaded machine). */
  readonly startTimeoutMs?: number;
}

export interface EtcdInstance extends AsyncDisposable {
  /** `127.0.0.1:<port>`, as etcd's own client takes it. */
  readonly endpoint: string;
  /** `http://127.0.0.1:<port>` (`https://` with TLS). */
  readonly url: string;
  readonly dataDir: string;
  /** Whether etcd is running. */
  readonly running: boolean;
  /** Ends etcd with SIGTERM and waits for it to exit. */
  stop(): Promise<void>;
  /** Ends etcd with SIGKILL (a crash) and waits for it to exit. */
  kill(): Promise<void>;
  /** Runs etcd again, on the same ports and data directory, and waits until it serves clients. */
  start(): Promise<void>;
  /** Ends etcd and removes its data directory. */
  close(): Promise<void>;
  /** What etcd wrote on stderr lately (its log), for failure messages. */
  log(): string;
}

/** The first port of the kernel's ephemeral range (what `listen(0)` and outgoing connections get); 32768 if unknown. */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32768;
  } catch {
    return 32768;
  }
}

/** Listens on `port` of 127.0.0.1 (0: any) and closes again; the port, or undefined when it was taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : undefined));
    });
  });
}

/**
 * A port nothing listens on now, for something to bind a moment or some seconds later (etcd, etcd restarted, a server
 * that listens only once etcd answers). Chosen below the kernel's ephemeral range: a port `listen(0)` gave is handed to
 * any process's next listener or outgoing connection once closed, and under a busy test run one was taken before it
 * was bound again. Below that range only a process choosing ports this way can take it.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralStart();
  const bottom = Math.max(1024, top - 12_000);
  for (let attempt = 0; top - bottom >= 1_000 && attempt < 50; attempt++) {
    const port = await tryPort(bottom + Math.floor(Math.random() * (top - bottom)));
    if (port !== undefined) return port;
  }
  const any = await tryPort(0);
  if (any === undefined) throw new Error("no free port on 127.0.0.1");
  return any;
}

// Runs etcd in the background and prints its pid. A watchdog kills etcd and removes its data directory when stdin
// (our pipe) closes: when the test process ends, however it ends, or on close(). When etcd exits by itself (stop(),
// kill()), the watchdog is ended, so nothing is left to kill a pid reused later. A background job's stdin is
// /dev/null, so the watchdog reads the pipe through fd 3.
const WRAPPER = [
  'exec 3<&0; "$@" & pid=$!; echo "pid $pid"',
  '(read -r _ <&3; kill -9 "$pid" 2>/dev/null; sleep 0.2; rm -rf "$XDSKIT_ETCD_DATA_DIR") & watchdog=$!',
  'wait "$pid"; status=$?; kill "$watchdog" 2>/dev/null; exit $status',
].join("\n");

const READY = "serving client traffic";
const LOG_KEPT = 16_384;

/**
 * Starts etcd; throws (with its log) when there is no etcd or it does not come up. A port taken between finding it
 * free and etcd binding it (another test process) is tried again with other ports, twice.
 */
export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdInstance> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test((error as Error).message)) throw error;
    }
  }
}

async function startOnce(options: StartEtcdOptions): Promise<EtcdInstance> {
  const binary = etcdBinary();
  if (binary === undefined) throw new Error(`no etcd binary on PATH (install it: ${ETCD_INSTALL_COMMAND})`);
  const dataDir = mkdtempSync(join(tmpdir(), "xdskit-etcd-"));
  const clientPort = await freePort();
  const peerPort = await freePort();
  const scheme = options.tls ? "https" : "http";
  const url = `${scheme}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    "--name",
    "test",
    "--data-dir",
    dataDir,
    "--listen-client-urls",
    url,
    "--advertise-client-urls",
    url,
    "--listen-peer-urls",
    peer,
    "--initial-advertise-peer-urls",
    peer,
    "--initial-cluster",
    `test=${peer}`,
    "--logger",
    "zap",
    "--log-outputs",
    "stderr",
    ...(options.maxRequestBytes !== undefined ? ["--max-request-bytes", String(options.maxRequestBytes)] : []),
    ...(options.maxTxnOps !== undefined ? ["--max-txn-ops", String(options.maxTxnOps)] : []),
    ...(options.tls
      ? [
          "--cert-file",
          options.tls.certFile,
          "--key-file",
          options.tls.keyFile,
          ...(options.tls.clientCaFile ? ["--trusted-ca-file", options.tls.clientCaFile, "--client-cert-auth"] : []),
        ]
      : []),
    ...(options.args ?? []),
  ];
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  let child: ChildProcess | undefined;
  let pid: number | undefined;
  let exited: Promise<void> = Promise.resolve();
  let log = "";
  let closed = false;

  const launch = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const started = spawn("sh", ["-c", WRAPPER, "etcd-wrapper", binary, ...args], {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env, XDSKIT_ETCD_DATA_DIR: dataDir },
      });
      child = started;
      pid = undefined;
      let ready = false;
      const timer = setTimeout(() => {
        started.stdin?.end();
        reject(new Error(`etcd did not serve clients within ${startTimeoutMs} ms:\n${log.slice(-4000)}`));
      }, startTimeoutMs);
      started.stdout?.setEncoding("utf8").on("data", (text: string) => {
        const match = /pid (\d+)/.exec(text);
        if (match) pid = Number(match[1]);
      });
      started.stderr?.setEncoding("utf8").on("data", (text: string) => {
        log = (log + text).slice(-LOG_KEPT);
        if (!ready && log.includes(READY)) {
          ready = true;
          clearTimeout(timer);
          resolve();
        }
      });
      exited = new Promise<void>((done) => {
        started.once("exit", () => {
          clearTimeout(timer);
          started.stdin?.end();
          if (!ready) reject(new Error(`etcd exited before serving clients:\n${log.slice(-4000)}`));
          done();
        });
      });
      // The watchdog's pipe: ending it kills etcd.
      started.stdin?.on("error", () => {});
    });

  const signal = async (name: NodeJS.Signals): Promise<void> => {
    const current = child;
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return;
    if (pid !== undefined) {
      try {
        process.kill(pid, name);
      } catch {
        // already gone
      }
    } else {
      current.stdin?.end();
    }
    await exited;
  };

  const instance: EtcdInstance = {
    endpoint: `127.0.0.1:${clientPort}`,
    url,
    dataDir,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    async start() {
      if (closed) throw new Error("this etcd was closed");
      if (instance.running) return;
      log = "";
      await launch();
    },
    async close() {
      if (closed) return;
      closed = true;
      await signal("SIGKILL");
      child?.stdin?.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
    log: () => log,
    [Symbol.asyncDispose]: () => instance.close(),
  };
  try {
    await launch();
  } catch (error) {
    await instance.close();
    throw error;
  }
  return instance;
}

/** Whether `apt-get` can install etcd here: root, with apt-get on PATH. */
export function canInstallEtcd(): boolean {
  return process.getuid?.() === 0 && spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
}
