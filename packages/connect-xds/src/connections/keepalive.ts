// Client keepalive on a backend connection (gRFC A8): every `timeMs` a PING goes out, while calls are in flight (or
// always, with `permitWithoutCalls`); a PING not acknowledged within `timeoutMs` means the connection is dead, and
// it is closed so its calls fail and the subchannel reconnects. A server that answers GOAWAY ENHANCE_YOUR_CALM
// "too_many_pings" gets pings half as often on that connection from then on. See docs/decisions.md#connect-xds-keepalive-and-idle.
import type * as http2 from "node:http2";
import type { Clock } from "@xdskit/orca-lrs-bridge";
import type { KeepaliveOptions } from "./transport-options.js";

/** gRPC's default: no keepalive pings from clients. */
export const DEFAULT_KEEPALIVE_TIME_MS = Number.POSITIVE_INFINITY;
/** gRPC's default wait for a PING's acknowledgement. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 20_000;
/** grpc-go and grpc-java raise a client's keepalive time to at least 10 s. */
export const MIN_KEEPALIVE_TIME_MS = 10_000;
/** Node's timers hold at most 2^31-1 ms; longer times are that. */
const MAX_TIMER_MS = 0x7fff_ffff;

export interface KeepaliveConfig {
  /** Between pings; at most MAX_TIMER_MS. */
  readonly timeMs: number;
  readonly timeoutMs: number;
  readonly permitWithoutCalls: boolean;
}

function duration(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (Number.isNaN(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number of milliseconds, not ${value}`);
  return value;
}

/** The keepalive of a transport's connections from its options; undefined when off. Throws naming a bad option. */
export function resolveKeepalive(
  options: KeepaliveOptions,
  minTimeMs = MIN_KEEPALIVE_TIME_MS,
): KeepaliveConfig | undefined {
  const timeMs = duration(options.keepaliveTimeMs, DEFAULT_KEEPALIVE_TIME_MS, "keepaliveTimeMs");
  const timeoutMs = duration(options.keepaliveTimeoutMs, DEFAULT_KEEPALIVE_TIMEOUT_MS, "keepaliveTimeoutMs");
  if (timeMs === Number.POSITIVE_INFINITY) return undefined;
  return {
    timeMs: Math.min(Math.max(timeMs, minTimeMs), MAX_TIMER_MS),
    timeoutMs: Math.min(timeoutMs, MAX_TIMER_MS),
    permitWithoutCalls: options.keepalivePermitWithoutCalls === true,
  };
}

/**
 * Pings `session` as `config` says; `hasCalls` tells whether calls are in flight, `onDead` gets the error when a
 * ping goes unanswered (once). Returns the function that stops it.
 */
export function startKeepalive(
  session: http2.ClientHttp2Session,
  clock: Clock,
  config: KeepaliveConfig,
  hasCalls: () => boolean,
  onDead: (error: Error) => void,
): () => void {
  let timer: unknown;
  let stopped = false;
  const stop = () => {
    stopped = true;
    clock.clearTimeout(timer);
  };
  const arm = () => {
    timer = clock.setTimeout(tick, config.timeMs);
  };
  const tick = () => {
    if (stopped) return;
    if (!config.permitWithoutCalls && !hasCalls()) {
      arm();
      return;
    }
    let answered = false;
    const sent = session.ping((error) => {
      if (stopped || answered) return;
      answered = true;
      clock.clearTimeout(timer);
      // An error here means the session went away: its own events report that.
      if (error === null) arm();
    });
    if (!sent) {
      arm();
      return;
    }
    timer = clock.setTimeout(() => {
      if (stopped || answered) return;
      stop();
      onDead(new Error(`keepalive PING not acknowledged within ${config.timeoutMs} ms`));
    }, config.timeoutMs);
  };
  arm();
  return stop;
}

/** A8: whether a GOAWAY is the server's "too many pings" (ENHANCE_YOUR_CALM with that debug data). */
export function isTooManyPings(code: number, opaqueData: Buffer | undefined): boolean {
  return code === 11 && opaqueData?.toString() === "too_many_pings";
}
