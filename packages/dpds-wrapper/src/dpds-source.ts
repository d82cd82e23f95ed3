// One DPDS resource, watched through the inner client, and the watches that take their parameters from it. Until it
// is settled (its first answer, or the wait running out), those watches are not subscribed anywhere; then, and on
// every change, each one is told to follow (docs/decisions.md#dpds-watches-made-before-it-is-known).
import type { XdsClient } from "@xdskit/xds-client";
import { type DynamicParametersUpdate, dpdsResourceType } from "./dpds-resource-type.js";
import type { WrapperLog } from "./log.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import type { CallbackResult, Parameters } from "./moving-watch.js";

/** A watch that takes its parameters from a DPDS resource. */
export interface Follower {
  /** The DPDS parameters changed, or became known: subscribe or move. Returns what a watcher callback returned. */
  follow(): CallbackResult;
}

export interface DpdsSource {
  readonly resourceName: string;
  /** The resource (or the lack of it) is known: followers subscribe at once. */
  readonly settled: boolean;
  /** Why no parameters come from DPDS (not obtained, failed, not received in time); undefined while they do. */
  readonly reason: string | undefined;
  /** The DPDS parameters for a type (full message name); empty when there are none. */
  parametersFor(typeName: string): Parameters;
  add(follower: Follower): void;
  remove(follower: Follower): void;
  close(): void;
}

const NONE: Parameters = Object.freeze({});

export function createDpdsSource(client: XdsClient, resourceName: string, waitMs: number, log: WrapperLog): DpdsSource {
  const followers = new Set<Follower>();
  let update: DynamicParametersUpdate | undefined;
  let settled = false;
  let reason: string | undefined = "not received yet";
  let timer: LongTimer | undefined;

  const followAll = (): CallbackResult => {
    const results = [...followers].map((f) => f.follow()).filter((r) => r instanceof Promise);
    return results.length === 0 ? undefined : Promise.all(results).then(() => undefined);
  };

  const settle = (): CallbackResult => {
    settled = true;
    clearLongTimer(timer);
    timer = undefined;
    return followAll();
  };

  const describe = (u: DynamicParametersUpdate) =>
    u.parametersByType.size === 0
      ? "no parameters for any type"
      : [...u.parametersByType]
          .map(
            ([type, p]) =>
              `${type} {${Object.entries(p)
                .map(([k, v]) => `${k}=${v}`)
                .join(",")}}`,
          )
          .join(", ");

  const cancelWatch = client.watch(dpdsResourceType, resourceName, {
    onResourceChanged(result) {
      if (result.ok) {
        update = result.resource;
        reason = undefined;
        log.info(() => `DPDS resource ${resourceName} (version ${result.version}): ${describe(result.resource)}`);
      } else {
        update = undefined;
        reason = result.error.message;
        log.warn(`DPDS resource ${resourceName}: ${reason}; subscribing with no parameters from DPDS`);
      }
      return settle();
    },
    onAmbientError(error) {
      log.warn(`DPDS resource ${resourceName}: ${error.message}; the parameters it gave stay in use`);
    },
    onAmbientErrorCleared() {
      log.info(`DPDS resource ${resourceName}: the last error no longer holds`);
    },
  });

  if (waitMs <= 0) settled = true;
  else {
    // waitForDpdsMs, from the options: any length (docs/decisions.md#long-timers).
    timer = setLongTimeout(() => {
      if (settled) return;
      reason = `not received within ${waitMs} ms`;
      log.warn(`DPDS resource ${resourceName}: ${reason}; subscribing with no parameters from DPDS until it comes`);
      settle();
    }, waitMs);
    timer.unref();
  }

  return {
    resourceName,
    get settled() {
      return settled;
    },
    get reason() {
      return reason;
    },
    parametersFor: (typeName) => update?.parametersByType.get(typeName) ?? NONE,
    add: (follower) => followers.add(follower),
    remove: (follower) => followers.delete(follower),
    close() {
      clearLongTimer(timer);
      timer = undefined;
      followers.clear();
      cancelWatch();
    },
  };
}
