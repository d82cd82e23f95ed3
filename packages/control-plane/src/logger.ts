/** Where the server writes what it does. Inject one; the default drops everything. */
export interface Logger {
  error(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  debug(message: string, ...args: unknown[]): void;
  trace(message: string, ...args: unknown[]): void;
}

const noop = (): void => {};

/** A logger that drops everything (the default). */
export const noopLogger: Logger = Object.freeze({ error: noop, warn: noop, info: noop, debug: noop, trace: noop });

/** A logger that puts `prefix` before every message, e.g. `[control-plane] [ads #3]`. */
export function prefixLogger(logger: Logger, prefix: string): Logger {
  if (logger === noopLogger) return logger;
  return {
    error: (message, ...args) => logger.error(`${prefix} ${message}`, ...args),
    warn: (message, ...args) => logger.warn(`${prefix} ${message}`, ...args),
    info: (message, ...args) => logger.info(`${prefix} ${message}`, ...args),
    debug: (message, ...args) => logger.debug(`${prefix} ${message}`, ...args),
    trace: (message, ...args) => logger.trace(`${prefix} ${message}`, ...args),
  };
}
