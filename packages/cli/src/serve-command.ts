// `xdskit serve <dir>`: an xDS management server (@xdskit/control-plane) serving the resources in a folder of
// JSON/YAML files, reloaded when the files change, with CSDS and health on the same port.
import { access, stat } from "node:fs/promises";
import { createManagementServer, type ManagementServer, type ServerTlsOptions } from "@xdskit/control-plane";
import { environmentLogLevel } from "@xdskit/xds-client/internal";
import { aborted, CliError, type CommandRun, durationOption, ExitCode, integerOption, UsageError } from "./command.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import { checkResources, formatWarning, type ResourceWarning } from "./resource-checks.js";
import { countByType, describeChanges, diffResources } from "./resource-diff.js";
import { type LoadedResource, type LoadedResources, loadResourceFiles, RESOURCE_FILE } from "./resource-files.js";
import { logLoads } from "./serve-loads.js";
import { listenFailure, logClients, serveLogger } from "./serve-log.js";
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

/**
 * The resources of `dir` and what the checks say of them; `problems` are files that could not be read at all.
 * `debug` (XDSKIT_LOG=cli=debug) is told what was read and how long it took.
 */
async function load(
  dir: string,
  debug?: (line: string) => void,
): Promise<LoadedResources & { warnings: readonly ResourceWarning[] }> {
  const started = performance.now();
  const loaded = await loadResourceFiles(dir).catch((error: Error) => ({
    problems: [error.message],
    resources: [],
    files: 0,
  }));
  const warnings = loaded.problems.length > 0 ? [] : checkResources(loaded.resources);
  debug?.(
    `read ${loaded.files} file(s) under ${dir}: ${loaded.resources.length} resource(s), ${loaded.problems.length} ` +
      `problem(s), ${warnings.length} warning(s) in ${(performance.now() - started).toFixed(1)} ms`,
  );
  return { ...loaded, warnings };
}

const stamp = () => new Date().toISOString();
const indented = (lines: readonly string[]) => lines.map((line) => `  ${line}\n`).join("");

export const run: CommandRun = async (positionals, values, io) => {
  if (values.etcd !== undefined) {
    const { serveFromEtcd } = await import("./serve-etcd.js");
    return serveFromEtcd(positionals, values, io, await tlsOption(values));
  }
  if (positionals.length !== 1) throw new UsageError("expected one <dir> (or --etcd <endpoints>)");
  const dir = positionals[0]!;
  const port = integerOption(values, "port", 18000);
  const debounceMs = integerOption(values, "debounce-ms", 100);
  const lrsIntervalMs = durationOption(values, "load-report-interval") ?? 10_000;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const host = (values.host as string | undefined) ?? "127.0.0.1";
  const verbose = values.verbose === true;
  const strict = values.strict === true;
  const tls = await tlsOption(values);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new CliError(`${dir} is not a folder`);

  const cliLevel = environmentLogLevel("cli", io.env);
  const debug =
    cliLevel === "debug" || cliLevel === "trace"
      ? (text: string) => io.stderr(`${stamp()} debug [cli] ${text}\n`)
      : undefined;
  const first = await load(dir, debug);
  if (first.problems.length > 0) throw new CliError(`cannot serve ${dir}:\n${indented(first.problems)}`);
  if (strict && first.warnings.length > 0) {
    throw new CliError(`cannot serve ${dir} (--strict):\n${indented(first.warnings.map(formatWarning))}`);
  }
  const status = serveStatusRoutes();
  // Until it listens, the server's own error lines would repeat what the one line below says.
  let listening = false;
  const logger = serveLogger(io, verbose, () => listening);
  let server: ManagementServer;
  try {
    server = await createManagementServer({
      host,
      port,
      logger,
      routes: status.routes,
      lrsPolicy: { intervalMs: lrsIntervalMs },
      // A long-lived server keeps no history of hook events (CSDS and the log read them as they happen).
      historyLimit: 0,
      ...(tls ? { tls } : {}),
    });
  } catch (error) {
    throw listenFailure(host, port, error);
  }
  listening = true;
  status.attach(server);
  logClients(io, server, verbose);
  const stopLoads = logLoads(io, server, {
    verbose,
    table: values.loads === true,
    json: values["loads-json"] === true,
  });
  let served: readonly LoadedResource[] = first.resources;
  server.setSnapshot(served.map((r) => r.message));
  const warn = (warnings: readonly ResourceWarning[]) => {
    for (const warning of warnings) io.stderr(`${stamp()} warning: ${formatWarning(warning)}\n`);
  };

  let timer: LongTimer | undefined;
  let reloading = Promise.resolve();
  const reload = async () => {
    const loaded = await load(dir, debug);
    if (io.signal.aborted) return;
    if (loaded.problems.length > 0) {
      io.stderr(`${stamp()} not reloaded, still serving the previous resources:\n${indented(loaded.problems)}`);
      return;
    }
    if (strict && loaded.warnings.length > 0) {
      const lines = loaded.warnings.map(formatWarning);
      io.stderr(`${stamp()} not reloaded (--strict), still serving the previous resources:\n${indented(lines)}`);
      return;
    }
    const changes = describeChanges(diffResources(served, loaded.resources));
    served = loaded.resources;
    server.setSnapshot(served.map((r) => r.message));
    io.stdout(`${stamp()} reloaded: ${changes}\n`);
    warn(loaded.warnings);
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
    onError: (error) => io.stderr(`${stamp()} watching ${dir}: ${error.message}\n`),
  });
  // Said once the folder is watched: a change made after this line is never missed.
  const scheme = tls ? (tls.caFile ? "mTLS" : "TLS") : "cleartext";
  io.stdout(`serving ${dir} on ${server.address} (${scheme}; ADS, CSDS, health): ${countByType(served)}\n`);
  warn(first.warnings);

  await aborted(io.signal);
  io.stdout(`${stamp()} stopping: closing ${server.streams().length} client stream(s)\n`);
  clearLongTimer(timer);
  watcher.close();
  stopLoads();
  await reloading;
  await server.close();
  io.stdout(`${stamp()} stopped\n`);
  return ExitCode.ok;
};
