import type { ResourceResult, ResourceWatcher, XdsError } from "../../src/index.js";

export type WatchEvent<T> =
  | { kind: "resource"; resource: T; version: string }
  | { kind: "error"; error: XdsError }
  | { kind: "ambient"; error: XdsError }
  | { kind: "cleared" };

/** A watcher that records what it is told, for exact assertions. */
export interface RecordingWatcher<T> extends ResourceWatcher<T> {
  readonly events: WatchEvent<T>[];
  /** Removes and returns the events seen so far. */
  take(): WatchEvent<T>[];
}

export interface RecordingOptions {
  /** Implement the optional `onAmbientErrorCleared` (default true); without it the client re-delivers the resource. */
  readonly clears?: boolean;
}

export function recordingWatcher<T>(options: RecordingOptions = {}): RecordingWatcher<T> {
  const events: WatchEvent<T>[] = [];
  const watcher: RecordingWatcher<T> = {
    events,
    onResourceChanged(result: ResourceResult<T>) {
      if (result.ok) events.push({ kind: "resource", resource: result.resource, version: result.version });
      else events.push({ kind: "error", error: result.error });
    },
    onAmbientError(error: XdsError) {
      events.push({ kind: "ambient", error });
    },
    take() {
      return events.splice(0, events.length);
    },
  };
  if (options.clears ?? true) {
    return Object.assign(watcher, {
      onAmbientErrorCleared() {
        events.push({ kind: "cleared" as const });
      },
    });
  }
  return watcher;
}

/** Summaries that read well in `toEqual`: `resource:v1:name`, `error:NOT_FOUND:does_not_exist`, `ambient:...`, `cleared`. */
export function summarize<T extends { name: string }>(events: WatchEvent<T>[]): string[] {
  return events.map((e) => {
    if (e.kind === "resource") return `resource:${e.version}:${e.resource.name}`;
    if (e.kind === "cleared") return "cleared";
    const code = e.error.message.slice(1, e.error.message.indexOf("]"));
    return `${e.kind}:${code}:${e.error.kind}`;
  });
}

export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
}
