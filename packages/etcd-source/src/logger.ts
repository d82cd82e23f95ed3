// The one logger shape the suite shares (`console` fits): @xdskit/control-plane's, so one object serves a replica's
// server and its etcd source.
import type { Logger } from "@xdskit/control-plane";
import { loggerFromEnvironment } from "@xdskit/control-plane/internal";

export type { Logger, LogLevel } from "@xdskit/control-plane";

const noop = (): void => {};

/** Drops everything (the default). */
export const silentLogger: Logger = Object.freeze({ error: noop, warn: noop, info: noop, debug: noop });

/** Prefixes every message (`[etcd-source] ...`); the levels a logger turns off stay off. */
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

/**
 * `given`, else the logger the environment asks for (XDSKIT_LOG=etcd-source=..., GRPC_VERBOSITY; docs/logging.md),
 * read now, at creation; else silent.
 */
export function loggerOrEnvironment(given: Logger | undefined): Logger {
  return given ?? loggerFromEnvironment("etcd-source") ?? silentLogger;
}
