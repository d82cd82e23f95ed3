// What `xdskit serve` prints about its clients on stderr. Always: the control plane's warnings and errors, and every
// NACK (a client that rejects what it was sent is the thing to know). With --verbose also: its info lines, and one
// line per stream opened or closed, request and response, each with the stream's node id. Every line starts with
// the time. A client that goes away (closes its stream, cancels it, drops the connection) is a normal close.
import type { HookEventMap, Logger, LogLevel, ManagementServer } from "@xdskit/control-plane";
import { environmentLogLevel, type LogComponent } from "@xdskit/xds-client/internal";
import { CliError, type CliIo } from "./command.js";
import { shortTypeName } from "./resource-diff.js";
import { detailText } from "./stderr-log.js";

function line(io: CliIo, text: string): void {
  io.stderr(`${new Date().toISOString()} ${text}\n`);
}

/** Why the server could not listen, in one line: a port in use names --port. */
export function listenFailure(host: string, port: number, error: unknown): CliError {
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    return new CliError(
      `${host}:${port} is already in use: stop what listens there, or choose --port (0: any free port)`,
    );
  }
  return new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
}

const ORDER: readonly LogLevel[] = ["error", "warn", "info", "debug", "trace"];

/**
 * The control plane's own log (or `component`'s: the etcd source's in serve --etcd): warnings and errors, info with
 * --verbose, and down to the level XDSKIT_LOG (or GRPC_VERBOSITY/GRPC_TRACE) sets for the component in `io.env`
 * (docs/logging.md). Nothing is written while `on()` is false (before the server listens: a failure to listen is
 * told once, by the command).
 */
export function serveLogger(
  io: CliIo,
  verbose: boolean,
  on: () => boolean = () => true,
  component: LogComponent = "control-plane",
): Logger {
  const fromEnv = environmentLogLevel(component, io.env);
  const base: LogLevel = verbose ? "info" : "warn";
  const level = fromEnv !== undefined && ORDER.indexOf(fromEnv) > ORDER.indexOf(base) ? fromEnv : base;
  const isEnabled = (wanted: LogLevel) => ORDER.indexOf(wanted) <= ORDER.indexOf(level);
  const write =
    (name: LogLevel) =>
    (message: string, ...details: unknown[]) => {
      if (on() && isEnabled(name)) line(io, `${name} ${message}${detailText(details)}`);
    };
  return { error: write("error"), warn: write("warn"), info: write("info"), debug: write("debug"), isEnabled };
}

const typeOf = (typeUrl: string) => shortTypeName(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));

const CLOSE_REASONS: Record<HookEventMap["stream-close"]["reason"], string> = {
  "client-closed": "the client closed it",
  cancelled: "the client went away",
  broken: "broken on purpose",
  "connection-aborted": "connection aborted",
  "invalid-request": "invalid request",
  unauthorized: "refused: unauthorized",
  "queue-full": "the client does not read: queue full",
  "server-stopped": "the server stopped",
  "deadline-exceeded": "its grpc-timeout elapsed",
  "internal-error": "internal error",
};

function names(list: readonly string[]): string {
  return list.length > 5 ? `${list.slice(0, 5).join(", ")} and ${list.length - 5} more` : list.join(", ");
}

/** Prints NACKs, and with `verbose` every stream event, from the server's hooks. */
export function logClients(io: CliIo, server: ManagementServer, verbose: boolean): void {
  const nodeOf = (node: { id: string } | undefined) => `node ${node?.id || "(no id)"}`;
  server.hooks.on("request", (event) => {
    const who = `[stream ${event.streamId}, ${nodeOf(event.node)}]`;
    if (event.disposition === "nack") {
      line(io, `NACK ${who} ${typeOf(event.typeUrl)}: ${event.errorDetail?.message ?? "(no detail)"}`);
    } else if (verbose) {
      const what =
        event.kind === "sotw"
          ? `version "${event.versionInfo}" [${names(event.resourceNames)}]`
          : `+[${names(event.subscribe)}] -[${names(event.unsubscribe)}]`;
      line(io, `${event.disposition} ${who} ${typeOf(event.typeUrl)} ${what}`);
    }
  });
  if (!verbose) return;
  server.hooks.on("response", (event) => {
    const errors = event.errorNames.length > 0 ? `, errors for [${names(event.errorNames)}]` : "";
    line(
      io,
      `response [stream ${event.streamId}, ${nodeOf(event.node)}] ${typeOf(event.typeUrl)} version "${event.versionInfo}" [${names(event.resourceNames)}]${errors}`,
    );
  });
  server.hooks.on("stream-open", (event) => {
    line(
      io,
      `opened [stream ${event.streamId}] ${event.kind === "sotw" ? "state of the world" : "delta"} from ${event.peer ?? "?"}`,
    );
  });
  server.hooks.on("stream-close", (event) => {
    const status = event.code ? ` (status ${event.code}: ${event.message})` : "";
    line(io, `closed [stream ${event.streamId}, ${nodeOf(event.node)}] ${CLOSE_REASONS[event.reason]}${status}`);
  });
}
