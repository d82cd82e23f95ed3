// What the call path applies per call from the chosen route, beyond picking: the A33 fault filter's decision and
// the A44 retry policy's state. See docs/decisions.md#policies-fault-injection and docs/decisions.md#policies-retry.

import { Code, ConnectError } from "@connectrpc/connect";
import type { TypedConfig } from "@xdskit/xds-client";
import type { RouteSelection } from "../balancer/config-selector.js";
import { clearLongTimer, setLongTimeout } from "../shared/long-timer.js";
import {
  decideFault,
  type FaultDecision,
  type FaultInjectionConfig,
  HTTP_FAULT_TYPE,
  parseHttpFault,
  processActiveFaults,
} from "./fault-injection.js";
import { createRetryState, type RetryState } from "./retry-state.js";
import type { RetryThrottle } from "./retry-throttle.js";

const parsed = new WeakMap<TypedConfig, FaultInjectionConfig | ConnectError>();

/** The fault config of a filter config, read once per config object. */
function faultConfig(config: TypedConfig, filterName: string): FaultInjectionConfig | ConnectError {
  let result = parsed.get(config);
  if (result === undefined) {
    try {
      if (config.kind !== "bytes") throw new Error("a TypedStruct config is not supported");
      result = parseHttpFault(config.value);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      result = new ConnectError(`fault filter "${filterName}" has an unusable config: ${reason}`, Code.Unavailable);
    }
    parsed.set(config, result);
  }
  return result;
}

/** A fault this call is given; `end()` once its delay is over (without abort) or its abort is delivered. */
export interface ActiveFault extends FaultDecision {
  end(): void;
}

/**
 * The faults of the route's fault filters for this call (A33): each filter's config, replaced by the route's
 * override (A39; a disabled override turns the filter off), decides independently; the first that injects
 * anything wins. Undefined when nothing is injected, including when max_active_faults is reached.
 */
export function routeFault(
  route: RouteSelection,
  headers: Headers,
  random: () => number,
): ActiveFault | ConnectError | undefined {
  for (const f of route.filters) {
    if (f.filter.config.type !== HTTP_FAULT_TYPE) continue;
    const config = faultConfig(f.override?.config ?? f.filter.config, f.filter.name);
    if (config instanceof ConnectError) return config;
    const decision = decideFault(config, headers, random);
    if (decision.delayMs === undefined && decision.abortCode === undefined) continue;
    if (!processActiveFaults.tryBegin(config.maxActiveFaults)) return undefined;
    let ended = false;
    return {
      ...decision,
      end() {
        if (ended) return;
        ended = true;
        processActiveFaults.end();
      },
    };
  }
  return undefined;
}

/** The error an injected abort fails the call with (A33; an OK abort ends a call with no response: INTERNAL). */
export function faultAbortError(code: number): ConnectError {
  if (code === 0) return new ConnectError("fault injected: the call ended with OK and no response", Code.Internal);
  return new ConnectError("fault injected: RPC terminated by the xDS fault filter", code as Code);
}

/** A44: the retry state of a call on `route`, when it has a retry policy with something to retry on. */
export function routeRetryState(
  route: RouteSelection | undefined,
  throttle: RetryThrottle | undefined,
  random: () => number,
): RetryState | undefined {
  const policy = route?.retryPolicy;
  if (policy === undefined || policy.retryOn.length === 0) return undefined;
  return createRetryState(policy, { throttle, random });
}

/** Waits `ms`, unless the call is cancelled or its deadline comes first (then rejects as those do). */
export function callSleep(ms: number, signal: AbortSignal | undefined, deadlineAt: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const until = deadlineAt === undefined ? ms : Math.min(ms, deadlineAt - performance.now());
    const expires = deadlineAt !== undefined && until < ms;
    const onAbort = () => {
      clearLongTimer(timer);
      reject(ConnectError.from(signal?.reason ?? new Error("the call was cancelled"), Code.Canceled));
    };
    // Delays and backoffs come from xDS, deadlines from the caller: any length (docs/decisions.md#long-timers).
    const timer = setLongTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        if (expires)
          reject(
            new ConnectError("deadline exceeded while waiting to retry or in an injected delay", Code.DeadlineExceeded),
          );
        else resolve();
      },
      Math.max(0, until),
    );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
