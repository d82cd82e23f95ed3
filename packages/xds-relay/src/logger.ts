// The relay takes the one logger shape the suite shares (`console` fits): it is @xdskit/control-plane's and
// @xdskit/xds-client's, so one object serves the relay, its server and its upstream client.
import type { Logger } from "@xdskit/control-plane";

export type { Logger, LogLevel } from "@xdskit/control-plane";

/** Prefixes every message (`[xds-relay] ...`); the levels a logger turns off stay off. */
export function prefixed(logger: Logger, prefix: string): Logger {
  const wrap =
    (write: (message: string, ...details: unknown[]) => void) =>
    (message: string, ...details: unknown[]) =>
      write.call(logger, `${prefix} ${message}`, ...details);
  return {
    error: wrap(logger.error),
    warn: wrap(logger.warn),
    info: wrap(logger.info),
    debug: wrap(logger.debug),
    ...(logger.isEnabled ? { isEnabled: (level) => logger.isEnabled?.(level) ?? true } : {}),
  };
}
