// A watcher that records what it is told, as short strings for exact assertions.
import type { ResourceResult, ResourceWatcher, XdsError } from "@xdskit/xds-client";

export interface Recorder<T> extends ResourceWatcher<T> {
  readonly events: string[];
  /** Removes and returns the events seen so far. */
  take(): string[];
  /** Resolves once at least `count` events are recorded (or after `timeoutMs`), then takes them. */
  next(count: number, timeoutMs?: number): Promise<string[]>;
}

/** `describe(resource)` names a resource in the events: `resource:<describe>`; errors read `error:<CODE>:<kind>`. */
export function recorder<T>(describe: (resource: T) => string, options: { clears?: boolean } = {}): Recorder<T> {
  const events: string[] = [];
  const code = (error: XdsError) => error.message.slice(1, error.message.indexOf("]"));
  const watcher: Recorder<T> = {
    events,
    onResourceChanged(result: ResourceResult<T>) {
      events.push(
        result.ok ? `resource:${describe(result.resource)}` : `error:${code(result.error)}:${result.error.kind}`,
      );
    },
    onAmbientError(error: XdsError) {
      events.push(`ambient:${code(error)}:${error.kind}`);
    },
    take: () => events.splice(0, events.length),
    async next(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      return events.splice(0, events.length);
    },
  };
  if (options.clears ?? true) {
    watcher.onAmbientErrorCleared = () => {
      events.push("cleared");
    };
  }
  return watcher;
}
