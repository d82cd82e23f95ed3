// The injected Logger (the xds-client's shape), with the wrapper's prefix. Messages are built only when their level
// is on.
import type { Logger, LogLevel } from "@xdskit/xds-client";

type Message = string | (() => string);

export interface WrapperLog {
  warn(message: Message): void;
  info(message: Message): void;
  debug(message: Message): void;
}

const PREFIX = "[dpds-wrapper]";

export function wrapperLog(logger: Logger | undefined): WrapperLog {
  const emit =
    (level: Exclude<LogLevel, "trace" | "error">) =>
    (message: Message): void => {
      if (logger === undefined) return;
      if (logger.isEnabled && !logger.isEnabled(level)) return;
      logger[level](`${PREFIX} ${typeof message === "function" ? message() : message}`);
    };
  return { warn: emit("warn"), info: emit("info"), debug: emit("debug") };
}
