// `xdskit serve <dir>`: an xDS management server (@xdskit/control-plane) serving the resources in a folder of
// JSON/YAML files, reloaded when the files change.
import { watch } from "node:fs";
import { stat } from "node:fs/promises";
import type { Message } from "@bufbuild/protobuf";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { aborted, CliError, type CommandRun, ExitCode, integerOption, UsageError } from "./command.js";
import { loadResourceFiles } from "./resource-files.js";
import { stderrLogger } from "./stderr-logger.js";

function countByType(resources: readonly Message[]): string {
  const counts = new Map<string, number>();
  for (const message of resources) {
    const short = message.$typeName.slice(message.$typeName.lastIndexOf(".") + 1);
    counts.set(short, (counts.get(short) ?? 0) + 1);
  }
  return counts.size === 0 ? "none" : [...counts].map(([type, n]) => `${type} ${n}`).join(", ");
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length !== 1) throw new UsageError("expected one <dir>");
  const dir = positionals[0]!;
  const port = integerOption(values, "port", 18000);
  const debounceMs = integerOption(values, "debounce-ms", 100);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new CliError(`${dir} is not a folder`);

  const first = await loadResourceFiles(dir);
  if (first.problems.length > 0) {
    throw new CliError(`cannot serve ${dir}:\n${first.problems.map((p) => `  ${p}\n`).join("")}`);
  }
  let server: ManagementServer;
  try {
    server = await createManagementServer({
      host: (values.host as string | undefined) ?? "127.0.0.1",
      port,
      ...(values.verbose ? { logger: stderrLogger(io) } : {}),
    });
  } catch (error) {
    throw new CliError(`cannot listen: ${(error as Error).message}`);
  }
  server.setSnapshot(first.resources);
  io.stdout(`serving ${dir} on ${server.address}: ${countByType(first.resources)}\n`);

  let timer: ReturnType<typeof setTimeout> | undefined;
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
    server.setSnapshot(loaded.resources);
    io.stdout(`reloaded: ${countByType(loaded.resources)}\n`);
  };
  const watcher = watch(dir, { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(reload, reload);
    }, debounceMs);
  });
  watcher.on("error", (error) => io.stderr(`watching ${dir} failed: ${error.message}\n`));

  await aborted(io.signal);
  clearTimeout(timer);
  watcher.close();
  await reloading;
  await server.close();
  return ExitCode.ok;
};
