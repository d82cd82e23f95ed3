/**
 * How a warm-up (warm-up.ts) went: the responses each of its streams got (the one subscribing by name, then the
 * wildcard), or why it stopped. A module of its own, imported by the warm-up and by the server module, so that the
 * server's declarations reach no stream internals (whose types need Node's).
 */
export interface WarmUpReport {
  readonly responses: readonly number[];
  readonly error?: string;
}
