// `xdskit serve <dir>`: an xDS management server (@xdskit/control-plane) serving the resources in a folder of
// JSON/YAML files, reloaded when the files change, with CSDS and health on the same port.
import { access, stat } from "node:fs/promises";
import { createManagementServer, type ManagementServer, type ServerTlsOptions } from "@xdskit/control-plane";
import { aborted, CliError, type CommandRun, ExitCode, integerOption, UsageError } from "./command.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import { countByType, describeChanges, diffResources } from "./resource-diff.js";
import { type LoadedResource, loadResourceFiles, RESOURCE_FILE } from "./resource-files.js";
import { logClients, serveLogger } from "./serve-log.js";
import { serveStatusRoutes } from "./serve-status.js";
import { watchTree } from "./tree-watcher.js";

/** `--tls-cert`, `--tls-key` and `--tls-ca` as the control plane's TLS options; undefined for cleartext. */
export async function tlsOption(values: Record<string, unknown>): Promise<ServerTlsOptions | undefined> {
  const certFile = values["tls-cert"] as string | undefined;
  const keyFile = values["tls-key"] as string | undefined;
  const caFile = values["tls-ca"] as string | undefined;
  if (certFile === undefined && keyFile === undefined && caFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    throw new UsageError("--tls-cert and --tls-key go together (--tls-ca adds mTLS)");
  }
  for (const [option, file] of [
    ["--tls-cert", certFile],
    ["--tls-key", keyFile],
    ["--tls-ca", caFile],
  ] as const) {
    if (file !== undefined) {
      await access(file).catch((error: Error) => {
        throw new CliError(`${option} ${file}: ${error.message}`);
      });
    }
  }
  return { certFile, keyFile, ...(caFile !== undefined ? { caFile } : {}) };
}

export const run: CommandRun = async (positionals, values, io) => {
  if (values.etcd !== undefined) {
    const { serveFromEtcd } = await import("./serve-etcd.js");
    return serveFromEtcd(positionals, values, io, await tlsOption(values));
  }
  if (positionals.length !== 1) throw new UsageError("expected one <dir> (or --etcd <endpoints>)");
  const dir = positionals[0]!;
  const port = integerOption(values, "port", 18000);
  const debounceMs = integerOption(values, "debounce-ms", 100);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const verbose = values.verbose === true;
  const tls = await tlsOption(values);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new CliError(`${dir} is not a folder`);

  const first = await loadResourceFiles(dir);
  if (first.problems.length > 0) {
    throw new CliError(`cannot serve ${dir}:\n${first.problems.map((p) => `  ${p}\n`).join("")}`);
  }
  const status = serveStatusRoutes();
  let server: ManagementServer;
  try {
    server = await createManagementServer({
      host: (values.host as string | undefined) ?? "127.0.0.1",
      port,
      logger: serveLogger(io, verbose),
      routes: status.routes,
      // A long-lived server keeps no history of hook events (CSDS and the log read them as they happen).
      historyLimit: 0,
      ...(tls ? { tls } : {}),
    });
  } catch (error) {
    throw new CliError(`cannot listen: ${(error as Error).message}`);
  }
  status.attach(server);
  logClients(io, server, verbose);
  let served: readonly LoadedResource[] = first.resources;
  server.setSnapshot(served.map((r) => r.message));
  const scheme = tls ? (tls.caFile ? "mTLS" : "TLS") : "cleartext";
  io.stdout(`serving ${dir} on ${server.address} (${scheme}; ADS, CSDS, health): ${countByType(served)}\n`);

  let timer: LongTimer | undefined;
  let reloading = Promise.resolve();
  const reload = async () => {
    const loaded = await loadResourceFiles(dir).catch((error: Error) => ({
      problems: [error.message],
      resources: [],
    }));
    if (io.signal.aborted) return;
    if (loaded.problems.length > 0) {
      io.stderr(
        `not reloaded, still serving the previous resources:\n${loaded.problems.map((p) => `  ${p}\n`).join("")}`,
      );
      return;
    }
    const changes = describeChanges(diffResources(served, loaded.resources));
    served = loaded.resources;
    server.setSnapshot(served.map((r) => r.message));
    io.stdout(`reloaded: ${changes}\n`);
  };
  const watcher = await watchTree(dir, {
    relevant: (name) => RESOURCE_FILE.test(name),
    onChange: () => {
      clearLongTimer(timer);
      // --debounce-ms: any length (docs/decisions.md#long-timers).
      timer = setLongTimeout(() => {
        reloading = reloading.then(reload, reload);
      }, debounceMs);
    },
    onError: (error) => io.stderr(`watching ${dir}: ${error.message}\n`),
  });

  await aborted(io.signal);
  clearLongTimer(timer);
  watcher.close();
  await reloading;
  await server.close();
  return ExitCode.ok;
};
