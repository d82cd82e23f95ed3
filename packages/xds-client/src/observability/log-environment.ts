// Logging turned on from the environment, read when a client, transport or server is created (never when a module
// loads), for the packages of the suite that take a `Logger`; an explicit `logger` option wins (docs/logging.md).
//   XDSKIT_LOG=debug                       every component at debug
//   XDSKIT_LOG=info,connect-xds=trace      every component at info, connect-xds at trace
//   XDSKIT_LOG=xds-client=debug            xds-client only
// Without XDSKIT_LOG, gRPC's variables as grpc-js reads them: GRPC_VERBOSITY (ERROR, INFO, DEBUG, NONE) is the
// level of every component, and with DEBUG, the components GRPC_TRACE names (grpc-js tracer names, ours, `all`,
// `-name` to leave one out) also log at debug and trace. Lines go to stderr.
// The same file is in @xdskit/xds-client, @xdskit/control-plane and @xdskit/orca-lrs-bridge, so that each package
// stands alone; tools/scripts/test/log-environment.test.ts fails when the copies differ.

type Level = "error" | "warn" | "info" | "debug" | "trace";

/** The shape of the suite's `Logger` (each package declares its own, identical). */
interface EnvironmentLogger {
  error(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  debug(message: string, ...details: unknown[]): void;
  isEnabled(level: Level): boolean;
}

/** The components: one per package that takes a `Logger`. */
export const LOG_COMPONENTS = [
  "xds-client",
  "connect-xds",
  "control-plane",
  "orca-lrs-bridge",
  "xds-relay",
  "dpds-wrapper",
  "etcd-source",
  "cli",
] as const;
export type LogComponent = (typeof LOG_COMPONENTS)[number];

const LEVELS: readonly Level[] = ["error", "warn", "info", "debug", "trace"];

/**
 * grpc-js (and grpc-js-xds) tracer names, and the component each one turns on: the xDS client's tracer covers its
 * DPDS layer and its load reports too (grpc-js-xds traces LRS under `xds_client`); the resolver, balancer, call and
 * transport tracers are what @xdskit/connect-xds does; a server's are what the control plane and the relay serve.
 */
export const GRPC_TRACERS: Readonly<Record<string, readonly LogComponent[]>> = {
  xds_client: ["xds-client", "dpds-wrapper", "orca-lrs-bridge"],
  xds_channel_credentials: ["xds-client"],
  certificate_provider: ["xds-client"],
  csds: ["xds-client"],
  ...Object.fromEntries(
    [
      "xds_resolver",
      "cds_balancer",
      "xds_cluster_resolver",
      "xds_cluster_impl",
      "xds_cluster_manager",
      "xds_wrr_locality",
      "priority",
      "weighted_target",
      "round_robin",
      "pick_first",
      "ring_hash",
      "weighted_round_robin",
      "least_request",
      "outlier_detection",
      "fault_injection",
      "http_filter",
      "lb_policy_registry",
      "load_balancing_call",
      "resolving_call",
      "retrying_call",
      "resolving_load_balancer",
      "subchannel",
      "subchannel_call",
      "transport",
      "channel",
      "dns_resolver",
    ].map((name) => [name, ["connect-xds"]]),
  ),
  server: ["control-plane", "xds-relay"],
  server_call: ["control-plane", "xds-relay"],
};

type Env = Readonly<Record<string, string | undefined>>;
// Shared by the copies of this file (one per package) through the global symbol registry: told once per process.
const WARNED = Symbol.for("xdskit.log-environment.warned");
const registry = globalThis as Record<symbol, Set<string> | undefined>;
const warned: Set<string> = registry[WARNED] ?? new Set<string>();
registry[WARNED] = warned;

/** One line on stderr per bad value, however many components read it. */
function complain(variable: string, value: string, problem: string): void {
  const key = `${variable}=${value}`;
  if (warned.has(key)) return;
  warned.add(key);
  stderr()?.(`xdskit: ${variable}="${value}": ${problem}; see docs/logging.md\n`);
}

function stderr(): ((text: string) => void) | undefined {
  const stream = (globalThis as { process?: { stderr?: { write?: (text: string) => unknown } } }).process?.stderr;
  return stream?.write ? (text) => void stream.write?.(text) : undefined;
}

function readLevel(text: string): Level | "off" | undefined {
  const value = text.trim().toLowerCase();
  if (value === "off" || value === "none") return "off";
  return LEVELS.find((level) => level === value);
}

/** XDSKIT_LOG's level for `component`; undefined when it does not name one. */
function xdskitLevel(component: LogComponent, value: string): Level | "off" | undefined {
  let fallback: Level | "off" | undefined;
  let own: Level | "off" | undefined;
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const eq = part.indexOf("=");
    const name = eq < 0 ? undefined : part.slice(0, eq).trim();
    const level = readLevel(eq < 0 ? part : part.slice(eq + 1));
    if (level === undefined)
      complain("XDSKIT_LOG", value, `"${part}" is not a level (error, warn, info, debug, trace, off)`);
    else if (name === undefined || name === "*") fallback = level;
    else if (!(LOG_COMPONENTS as readonly string[]).includes(name)) {
      complain("XDSKIT_LOG", value, `"${name}" is not a component (${LOG_COMPONENTS.join(", ")})`);
    } else if (name === component) own = level;
  }
  return own ?? fallback;
}

/** GRPC_VERBOSITY and GRPC_TRACE as grpc-js reads them, for `component`. */
function grpcLevel(component: LogComponent, env: Env): Level | "off" | undefined {
  const verbosity = env.GRPC_VERBOSITY?.trim().toUpperCase();
  if (verbosity === undefined || verbosity === "") return undefined;
  if (verbosity === "NONE") return "off";
  if (verbosity === "ERROR") return "warn";
  if (verbosity === "INFO") return "info";
  if (verbosity !== "DEBUG") {
    complain("GRPC_VERBOSITY", env.GRPC_VERBOSITY ?? "", "expected DEBUG, INFO, ERROR or NONE");
    return undefined;
  }
  let traced = false;
  for (const raw of (env.GRPC_TRACE ?? "").split(",")) {
    const name = raw.trim();
    const off = name.startsWith("-");
    const tracer = off ? name.slice(1) : name;
    const hits = tracer === "all" || tracer === component || GRPC_TRACERS[tracer]?.includes(component) === true;
    if (hits) traced = !off;
  }
  return traced ? "trace" : "info";
}

/** The level the environment sets for `component`, or undefined when it asks for no log. */
export function environmentLogLevel(component: LogComponent, env: Env): Level | undefined {
  const xdskit = env.XDSKIT_LOG;
  const level =
    xdskit !== undefined && xdskit.trim() !== "" ? xdskitLevel(component, xdskit) : grpcLevel(component, env);
  return level === "off" ? undefined : level;
}

function detail(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * A logger writing `<time> <LEVEL> <message> <details>` lines to stderr at the level the environment sets for
 * `component`, or undefined when it sets none (or there is no stderr). `env` defaults to `process.env`.
 */
export function loggerFromEnvironment(component: LogComponent, env?: Env): EnvironmentLogger | undefined {
  const source = env ?? (globalThis as { process?: { env?: Env } }).process?.env ?? {};
  const level = environmentLogLevel(component, source);
  const write = stderr();
  if (level === undefined || write === undefined) return undefined;
  const rank = LEVELS.indexOf(level);
  const isEnabled = (wanted: Level) => LEVELS.indexOf(wanted) <= rank;
  const line =
    (name: Level) =>
    (message: string, ...details: unknown[]): void => {
      // `debug` carries the trace lines of a logger whose trace level is on (the suite's rule).
      if (!isEnabled(name)) return;
      const rest = details.length > 0 ? ` ${details.map(detail).join(" ")}` : "";
      write(`${new Date().toISOString()} ${name.toUpperCase()} ${message}${rest}\n`);
    };
  return { error: line("error"), warn: line("warn"), info: line("info"), debug: line("debug"), isEnabled };
}
