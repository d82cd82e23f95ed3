// What the two ADS protocols (state of the world and delta) have in common, as seen by the channel that runs them.
import { type AuthorityState, statesOfType } from "./authority.js";
import type { CacheUpdater, ChannelContext, DecodeMemo } from "./cache-updates.js";
import type { ScopedLogger } from "./logger.js";
import type { ResourceState } from "./resource-state.js";

/** One ADS call (stream) on a server. */
export interface AdsCall {
  readonly id: number;
  /** The request(s) that bring the server up to date with the subscriptions of `typeUrl`. */
  update(typeUrl: string): void;
  /**
   * Waits for the next response: a function that applies it (run inside a callback group; it also sends the ACK or
   * NACK), or undefined when the server ended the stream with OK. Rejects when the stream fails.
   */
  next(): Promise<(() => void) | undefined>;
  cancel(): void;
}

/** What a call needs from its channel. */
export interface CallHost {
  readonly context: ChannelContext;
  readonly log: ScopedLogger;
  readonly updater: CacheUpdater;
  /** The authorities whose subscriptions this server serves. */
  readonly authorities: ReadonlySet<AuthorityState>;
  /** State of the world: the last accepted version per type, kept across calls. */
  readonly versions: Map<string, string>;
  /** Per type: the previous response's decode results, kept across calls. */
  memo(typeUrl: string): DecodeMemo;
}

let nextCallId = 1;

export function newCallId(): number {
  return nextCallId++;
}

/** Every subscription of `typeUrl` this server serves. */
export function subscriptionsOf(host: CallHost, typeUrl: string): ResourceState[] {
  const out: ResourceState[] = [];
  for (const authority of host.authorities) for (const state of statesOfType(authority, typeUrl)) out.push(state);
  return out;
}
