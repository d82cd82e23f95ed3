// `xdskit list <type>`: the names of every resource of a type an xDS server has, from one wildcard subscription
// (what `grpcurl list` is to services). The first response answers it.
import { ConnectError } from "@connectrpc/connect";
import { statusCodeName } from "@xdskit/xds-client";
import { CliError, type CommandRun, durationOption, ExitCode, UsageError } from "./command.js";
import { clearLongTimer, setLongTimeout } from "./long-timer.js";
import { messageToJson } from "./proto-json.js";
import { messageOf, resolveResourceType } from "./resource-types.js";
import { permanentStatus, runWildcard, type WildcardUpdate } from "./wildcard-stream.js";
import { resolveXdsTarget } from "./xds-target.js";

const DEFAULT_TIMEOUT_MS = 10_000;

function asJson(typeUrl: string, update: WildcardUpdate): string {
  const resources = update.resources.map(({ name, version, result }) =>
    result.ok
      ? { name, version, resource: JSON.parse(messageToJson(messageOf(result.value))) }
      : { name, error: result.error },
  );
  return `${JSON.stringify({ type: typeUrl, version: update.version, resources }, null, 2)}\n`;
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length !== 1) throw new UsageError("expected one <type>");
  const type = resolveResourceType(positionals[0]!);
  const timeoutMs = durationOption(values, "timeout") ?? DEFAULT_TIMEOUT_MS;
  const target = await resolveXdsTarget(values, io.env);
  const done = new AbortController();
  // --timeout: any length (docs/decisions.md#long-timers).
  const timer = setLongTimeout(() => done.abort("timeout"), timeoutMs);
  let answer: WildcardUpdate | undefined;
  let lastError: Error | undefined;
  try {
    // A permanent status (the server refuses the method or the caller) ends it at once, with its message.
    await runWildcard({
      bootstrap: target.bootstrap,
      type,
      signal: AbortSignal.any([done.signal, io.signal]),
      onUpdate(update) {
        answer = update;
        done.abort("answered");
      },
      onError(error) {
        lastError = error;
      },
    });
  } catch (error) {
    if (permanentStatus(error) === undefined) throw error;
    throw new CliError(`${target.bootstrap.xdsServers[0]?.serverUri} refused the request: ${describe(error as Error)}`);
  } finally {
    clearLongTimer(timer);
  }
  if (!answer) {
    if (io.signal.aborted) return ExitCode.ok;
    const why = lastError ? `; last error ${describe(lastError)}` : "";
    throw new CliError(`no answer from ${target.bootstrap.xdsServers[0]?.serverUri} in ${timeoutMs / 1000} s${why}`);
  }
  const sorted = { ...answer, resources: [...answer.resources].sort((a, b) => a.name.localeCompare(b.name)) };
  if (values.json) io.stdout(asJson(type.typeUrl, sorted));
  else io.stdout(sorted.resources.map((r) => `${r.name}\n`).join(""));
  const invalid = sorted.resources.filter((r) => !r.result.ok);
  for (const r of invalid) io.stderr(`${r.name}: invalid: ${r.result.ok ? "" : r.result.error}\n`);
  return invalid.length > 0 ? ExitCode.failure : ExitCode.ok;
};

function describe(error: Error): string {
  const connect = ConnectError.from(error);
  return `${statusCodeName(connect.code)}: ${connect.rawMessage}`;
}
