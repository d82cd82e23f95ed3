// `xdskit serve --etcd <endpoints>`: a control-plane replica fed from an etcd prefix (@xdskit/etcd-source). It
// listens only once it has read the prefix, so it never tells a client it has nothing; while etcd is unreachable it
// keeps serving the last revision it read, and says so. Several replicas on one prefix serve the same resources with
// the same versions (content versions), so clients move between them unnoticed.
import { createManagementServer, type ManagementServer, type ServerTlsOptions } from "@xdskit/control-plane";
import { createEtcdSource, type EtcdSourceChange, type EtcdSourceStatus } from "@xdskit/etcd-source";
import { aborted, CliError, type CliIo, durationOption, ExitCode, integerOption, UsageError } from "./command.js";
import { countKeysByType, typeChanges } from "./etcd-changes.js";
import { etcdTarget, openEtcd } from "./etcd-options.js";
import { describeChanges } from "./resource-diff.js";
import { logLoads } from "./serve-loads.js";
import { listenFailure, logClients, serveLogger } from "./serve-log.js";
import { serveStatusRoutes } from "./serve-status.js";

function stamp(io: CliIo, text: string): void {
  io.stderr(`${new Date().toISOString()} ${text}\n`);
}

export async function serveFromEtcd(
  positionals: readonly string[],
  values: Record<string, string | boolean | undefined>,
  io: CliIo,
  tls: ServerTlsOptions | undefined,
): Promise<number> {
  if (positionals.length !== 0) throw new UsageError("--etcd serves the resources of an etcd prefix: give no <dir>");
  if (values.strict === true) {
    throw new UsageError("--strict checks a folder: give it to xdskit apply, which checks what it writes to etcd");
  }
  const lrsIntervalMs = durationOption(values, "load-report-interval") ?? 10_000;
  const port = integerOption(values, "port", 18000);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const verbose = values.verbose === true;
  const host = (values.host as string | undefined) ?? "127.0.0.1";
  const target = await etcdTarget(values, io);
  const etcd = openEtcd(target);
  const status = serveStatusRoutes();
  // The source's lines from the start; the server's once it listens (a failure to listen is told once, below).
  const logger = serveLogger(io, verbose, undefined, "etcd-source");
  let listening = false;
  const serverLogger = serveLogger(io, verbose, () => listening);
  let server: ManagementServer;
  try {
    server = await createManagementServer({
      host,
      port,
      logger: serverLogger,
      routes: status.routes,
      lrsPolicy: { intervalMs: lrsIntervalMs },
      historyLimit: 0,
      // Replicas agree on every resource's version; TP2 variants from etcd are served most specific first.
      contentVersions: true,
      allowOverlappingVariants: true,
      listen: false,
      ...(tls ? { tls } : {}),
    });
  } catch (error) {
    etcd.close();
    throw new CliError(`cannot create the server: ${(error as Error).message}`);
  }
  status.attach(server);
  logClients(io, server, verbose);
  const stopLoads = logLoads(io, server, {
    verbose,
    table: values.loads === true,
    json: values["loads-json"] === true,
  });
  let loadedKeys: EtcdSourceChange["resources"]["added"] = [];
  let previous: EtcdSourceStatus["state"] = "connecting";
  const onStatus = (next: EtcdSourceStatus) => {
    if (next.state === "connecting" && next.error) {
      stamp(io, `waiting for etcd at ${target.endpoints}: ${next.error.message}`);
    } else if (next.state === "disconnected" && previous !== "disconnected") {
      stamp(io, `etcd lost (${next.error?.message ?? "unknown"}); still serving revision ${next.revision}`);
    } else if (next.state === "watching" && previous === "disconnected") {
      stamp(io, `etcd back; serving revision ${next.revision} and following it`);
    }
    previous = next.state;
  };
  const onChange = (change: EtcdSourceChange) => {
    if (change.cause === "load") {
      loadedKeys = change.resources.added;
      return;
    }
    const what = describeChanges(typeChanges(change.resources));
    const how = change.cause === "resync" ? " (read again after a compaction)" : "";
    io.stdout(`revision ${change.revision}${how}: ${what}\n`);
  };
  const source = createEtcdSource({ etcd, server, prefix: target.prefix, logger, onStatus, onChange });
  const finish = async () => {
    stopLoads();
    await source.close();
    etcd.close();
    await server.close();
  };
  const first = await Promise.race([
    source.ready.then(
      (revision) => ({ revision }),
      (error: Error) => ({ error }),
    ),
    aborted(io.signal).then(() => ({ aborted: true as const })),
  ]);
  if ("aborted" in first) {
    await finish();
    return ExitCode.ok;
  }
  if ("error" in first) {
    await finish();
    throw new CliError(`cannot serve from etcd at ${target.endpoints}: ${first.error.message}`);
  }
  try {
    await server.start();
  } catch (error) {
    await finish();
    throw listenFailure(host, port, error);
  }
  listening = true;
  const scheme = tls ? (tls.caFile ? "mTLS" : "TLS") : "cleartext";
  io.stdout(
    `serving etcd ${target.endpoints} ${target.prefix}/ at revision ${first.revision} on ${server.address} ` +
      `(${scheme}; ADS, CSDS, health): ${countKeysByType(loadedKeys)}\n`,
  );
  loadedKeys = [];
  await aborted(io.signal);
  io.stdout(`${new Date().toISOString()} stopping: closing ${server.streams().length} client stream(s)\n`);
  await finish();
  io.stdout(`${new Date().toISOString()} stopped\n`);
  return ExitCode.ok;
}
