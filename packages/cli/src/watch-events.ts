// How `xdskit watch` prints events, as text for people or one JSON object per line, and what they add up to: the
// exit code is 1 once any printed event was an error or an ambient error (docs/decisions.md#cli-watch-exit).
import type { Message } from "@bufbuild/protobuf";
import type { CliIo } from "./command.js";
import { messageToJson } from "./proto-json.js";

export type WatchEventKind = "resource" | "error" | "ambient_error";

export interface WatchEvent {
  readonly event: WatchEventKind;
  readonly name: string;
  readonly version?: string;
  readonly resource?: Message;
  /** The status code name, for errors. */
  readonly code?: string;
  /** For errors: the full message (JSON) and the short one people read (text). */
  readonly message?: string;
  readonly detail?: string;
}

export interface EventPrinter {
  print(event: WatchEvent): void;
  /** Events printed so far. */
  readonly printed: number;
  /** Whether any of them was an error or an ambient error. */
  readonly sawError: boolean;
}

export interface EventPrinterOptions {
  readonly typeText: string;
  readonly typeUrl: string;
  readonly json: boolean;
  /** After this many events (0: no limit), `onLimit` is called and later events are not printed. */
  readonly count: number;
  readonly onLimit: () => void;
}

export function createEventPrinter(io: CliIo, options: EventPrinterOptions): EventPrinter {
  let printed = 0;
  let sawError = false;
  const write = (text: string) => {
    io.stdout(text);
    if (printed === options.count) options.onLimit();
  };
  return {
    print(event) {
      if (options.count > 0 && printed >= options.count) return;
      printed++;
      if (event.event !== "resource") sawError = true;
      const time = new Date().toISOString();
      if (options.json) {
        const { resource, detail: _, ...fields } = event;
        const json = resource ? { resource: JSON.parse(messageToJson(resource)) } : {};
        write(`${JSON.stringify({ time, ...fields, type: options.typeUrl, ...json })}\n`);
        return;
      }
      const what =
        event.event === "resource"
          ? `version ${event.version}`
          : `${event.event} ${event.code}: ${event.detail ?? event.message}`;
      const body = event.resource ? `${messageToJson(event.resource, 2)}\n` : "";
      write(`[${time}] ${options.typeText} ${event.name}: ${what}\n${body}`);
    },
    get printed() {
      return printed;
    },
    get sawError() {
      return sawError;
    },
  };
}
