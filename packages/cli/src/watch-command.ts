// `xdskit watch <type> <name>...`: subscribes through @xdskit/xds-client and prints every update and error as it
// arrives (what grpcurl is for gRPC, for xDS resources). `*` as the name watches every resource of the type on a
// wildcard stream of its own (wildcard-stream.ts).
import { ConnectError } from "@connectrpc/connect";
import { createXdsClient, type ResourceType, statusCodeName, type XdsError } from "@xdskit/xds-client";
import {
  aborted,
  CliError,
  type CliIo,
  type CommandRun,
  durationOption,
  ExitCode,
  integerOption,
  UsageError,
} from "./command.js";
import { clearLongTimer, setLongTimeout } from "./long-timer.js";
import { messageOf, resolveResourceType } from "./resource-types.js";
import { createEventPrinter, type EventPrinter } from "./watch-events.js";
import { permanentStatus, runWildcard } from "./wildcard-stream.js";
import { resolveXdsTarget, type XdsTarget } from "./xds-target.js";

/**
 * A connection error whose status says the server will refuse every retry (wildcard-stream.ts's permanent codes):
 * the status the server sent, else undefined.
 */
function refusedBy(error: XdsError): ConnectError | undefined {
  if (error.kind !== "connection" || error.cause === undefined) return undefined;
  const cause = ConnectError.from(error.cause);
  return permanentStatus(cause) === undefined ? undefined : cause;
}

/**
 * Watches each name through the client until `stop` aborts, or until the server refuses the stream for good
 * (`refused` is then called once, with the status).
 */
async function watchNames(
  target: XdsTarget,
  type: ResourceType<unknown>,
  names: string[],
  printer: EventPrinter,
  stop: AbortSignal,
  refused: (error: ConnectError) => void,
) {
  const client = createXdsClient({ ...target.clientOptions, target: "xdskit-cli" });
  const printError = (name: string, event: "error" | "ambient_error", error: XdsError) => {
    printer.print({ event, name, code: statusCodeName(error.code), message: error.message, detail: error.detail });
    const status = refusedBy(error);
    if (status) refused(status);
  };
  const cancels = names.map((name) =>
    client.watch(type, name, {
      onResourceChanged(result) {
        if (stop.aborted) return;
        if (result.ok)
          printer.print({ event: "resource", name, version: result.version, resource: messageOf(result.resource) });
        else printError(name, "error", result.error);
      },
      onAmbientError(error) {
        if (!stop.aborted) printError(name, "ambient_error", error);
      },
    }),
  );
  await aborted(stop);
  for (const cancel of cancels) cancel();
  await client.close();
}

/** Watches every resource of the type on a wildcard stream until `stop` aborts. */
async function watchAll(target: XdsTarget, type: ResourceType<unknown>, printer: EventPrinter, stop: AbortSignal) {
  let lastError: string | undefined;
  await runWildcard({
    bootstrap: target.bootstrap,
    type,
    signal: stop,
    onUpdate(update) {
      lastError = undefined;
      for (const { name, version, result } of update.resources) {
        if (stop.aborted) return;
        if (result.ok) printer.print({ event: "resource", name, version, resource: messageOf(result.value) });
        else
          printer.print({
            event: "error",
            name,
            code: "INVALID_ARGUMENT",
            message: `invalid resource ${name}: ${result.error}`,
          });
      }
      for (const name of update.removed) {
        if (stop.aborted) return;
        printer.print({
          event: "error",
          name,
          code: "NOT_FOUND",
          message: `resource ${name} was removed by the xDS server (version ${update.version})`,
        });
      }
    },
    onError(error) {
      // The stream is opened again and again while the server is down: print a failure when it differs from the last.
      const connect = ConnectError.from(error);
      const message = `${statusCodeName(connect.code)}: ${connect.rawMessage}`;
      if (stop.aborted || message === lastError) return;
      lastError = message;
      printer.print({ event: "error", name: "*", code: statusCodeName(connect.code), message: connect.rawMessage });
    },
  });
}

export const run: CommandRun = async (positionals, values, io: CliIo) => {
  const [typeText, ...names] = positionals;
  if (typeText === undefined || names.length === 0) throw new UsageError("expected <type> and at least one <name>");
  const wildcard = names.includes("*");
  if (wildcard && names.length > 1) throw new UsageError(`"*" watches every resource: give it alone`);
  const type = resolveResourceType(typeText);
  const count = integerOption(values, "count", 0);
  const timeoutMs = durationOption(values, "timeout");
  const target = await resolveXdsTarget(values, io.env);
  const done = new AbortController();
  const printer = createEventPrinter(io, {
    typeText,
    typeUrl: type.typeUrl,
    json: values.json === true,
    count,
    onLimit: () => done.abort("count"),
  });
  // --timeout: any length (docs/decisions.md#long-timers).
  const timer = timeoutMs === undefined ? undefined : setLongTimeout(() => done.abort("timeout"), timeoutMs);
  const stop = AbortSignal.any([done.signal, io.signal]);
  let refusal: ConnectError | undefined;
  const refused = (error: ConnectError) => {
    refusal ??= error;
    done.abort("refused");
  };
  try {
    if (wildcard)
      await watchAll(target, type, printer, stop).catch((error: unknown) => refused(ConnectError.from(error)));
    else await watchNames(target, type, names, printer, stop, refused);
  } finally {
    clearLongTimer(timer);
  }
  if (refusal) {
    // Retrying cannot help: the server refuses the method or the caller (a relay that does not serve what is asked).
    throw new CliError(`the server refused the stream: ${statusCodeName(refusal.code)}: ${refusal.rawMessage}`);
  }
  // Ctrl-C ends a watch as asked; --count and --timeout end it with what the events add up to.
  if (!done.signal.aborted) return ExitCode.ok;
  if (done.signal.reason === "timeout" && (count > 0 || printer.printed === 0)) {
    const got = count > 0 ? `${printer.printed} of ${count} events` : "no event";
    throw new CliError(`timed out after ${values.timeout}: ${got}`);
  }
  return printer.sawError ? ExitCode.failure : ExitCode.ok;
};
