// Routing and picking for one call: wait for a config selector, select the route, pick from its cluster's picker,
// waiting while the picker queues, until the call's deadline, capped by the route's max stream duration (A31).
import { Code, ConnectError } from "@connectrpc/connect";
import type { RouteSelection } from "../balancer/config-selector.js";
import type { CompletePick, PickInfo } from "../balancer/lb-policy.js";
import type { ClusterEntry } from "../clusters/cluster-manager.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../shared/long-timer.js";
import type { CallState } from "./call-context.js";

export interface Picked {
  readonly pick: CompletePick;
  readonly entry: ClusterEntry;
}

/** What a call's picks share: its path and headers, and its route once selected (and when it first was). */
export interface CallInfo {
  path: string;
  headers: Headers;
  route?: RouteSelection;
  /** When a route was first selected for the call (A31: its max_stream_duration runs from then). */
  routedAt?: number;
}

/** One pick attempt, synchronous: the pick, an error to fail with, or undefined to wait for the next change. */
export function tryPick(state: CallState, info: CallInfo): Picked | ConnectError | undefined {
  if (state.closed !== undefined) return state.closed;
  const selector = state.selector;
  if (selector === undefined) return undefined;
  if (selector instanceof ConnectError) return selector;
  const route = selector.select(info.path, info.headers);
  if (route instanceof ConnectError) return route;
  const entry = state.clusters.get(route.cluster);
  if (entry === undefined) return new ConnectError(`cluster "${route.cluster}" is not known`, Code.Internal);
  info.route = route;
  const result = entry.picker.pick(info as PickInfo);
  switch (result.type) {
    case "complete":
      if (result.subchannel.state !== "READY") {
        result.tracker?.onPickDiscarded?.();
        return undefined;
      }
      // The call holds its cluster until it ends (A28), released by its attempt.
      entry.refs++;
      return { pick: result, entry };
    case "queue":
      return undefined;
    default:
      return result.error;
  }
}

/** Waits for a change, the call's signal or its deadline. */
function waitForChange(
  state: CallState,
  signal: AbortSignal | undefined,
  deadlineAt: number | undefined,
  what: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: LongTimer | undefined;
    const done = () => {
      stop();
      clearLongTimer(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const stop = state.onChange(() => {
      done();
      resolve();
    });
    const onAbort = () => {
      done();
      reject(ConnectError.from(signal?.reason ?? new Error("the call was cancelled"), Code.Canceled));
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort);
    if (deadlineAt !== undefined) {
      // A caller's deadline, or a route's max_stream_duration: any length (docs/decisions.md#long-timers).
      timer = setLongTimeout(
        () => {
          done();
          reject(new ConnectError(`deadline exceeded while waiting for ${what()}`, Code.DeadlineExceeded));
        },
        Math.max(0, deadlineAt - performance.now()),
      );
    }
  });
}

/**
 * The call's deadline capped by its route's max stream duration (A31), counted from when the route was first
 * selected: gRPC applies it once the resolver's configuration has routed the call, so waiting for the first
 * configuration does not count, and waiting for a connection does.
 */
export function routeDeadline(callDeadline: number | undefined, info: CallInfo): number | undefined {
  const maxStreamDurationMs = info.route?.maxStreamDurationMs;
  if (maxStreamDurationMs === undefined || maxStreamDurationMs <= 0 || info.routedAt === undefined) {
    return callDeadline;
  }
  const cap = info.routedAt + maxStreamDurationMs;
  return callDeadline === undefined || cap < callDeadline ? cap : callDeadline;
}

export async function pickWaiting(
  state: CallState,
  info: CallInfo,
  signal: AbortSignal | undefined,
  callDeadline: number | undefined,
): Promise<Picked> {
  for (;;) {
    const deadlineAt = routeDeadline(callDeadline, info);
    const what = () =>
      state.selector === undefined
        ? state.configWaitingFor()
        : info.route === undefined
          ? "a route"
          : (state.clusters.get(info.route.cluster)?.waitingFor() ?? `cluster "${info.route.cluster}"`);
    await waitForChange(state, signal, deadlineAt, what);
    const result = tryPick(state, info);
    if (info.route !== undefined) info.routedAt ??= performance.now();
    if (result instanceof ConnectError) throw result;
    if (result !== undefined) return result;
  }
}
