// A36's serving state: "serving" once a good Listener (and its RDS resources) is applied, "not serving" with a reason
// otherwise. Every change reaches the application's callback; without one, it is logged (not serving as a warning,
// serving again at info), as A36 asks of a server without a callback.
import type { ServerLogger } from "../logging.js";

/** Whether the server serves, and if not, why (for people: the text is not meant to be parsed). */
export interface ServingStatus {
  readonly serving: boolean;
  /** Why it does not serve; absent while serving. */
  readonly reason?: string;
}

export interface ServingStatusReporter {
  readonly current: ServingStatus;
  /** Records the state; reports it when it differs from the current one (serving, or the reason). */
  set(serving: true): void;
  set(serving: false, reason: string): void;
}

export function createServingStatus(
  initialReason: string,
  onServingStatus: ((status: ServingStatus) => void) | undefined,
  logger: ServerLogger,
): ServingStatusReporter {
  let current: ServingStatus = Object.freeze({ serving: false, reason: initialReason });
  return {
    get current() {
      return current;
    },
    set(serving: boolean, reason?: string) {
      if (serving === current.serving && reason === current.reason) return;
      current = Object.freeze(serving ? { serving: true } : { serving: false, reason: reason ?? "" });
      if (onServingStatus === undefined) {
        if (serving) logger.info("serving");
        else logger.warn(`not serving: ${reason}`);
        return;
      }
      logger.debug(() => (serving ? "serving" : `not serving: ${reason}`));
      try {
        onServingStatus(current);
      } catch (error) {
        logger.error("the onServingStatus callback threw", error);
      }
    },
  };
}
