// What the two ADS protocols (state of the world and delta) have in common, as seen by the channel that runs them.
import { create } from "@bufbuild/protobuf";
import { type Status, StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import { type AuthorityState, statesOfType } from "./authority.js";
import type { CacheUpdater, ChannelContext, DecodeMemo } from "./cache-updates.js";
import type { ScopedLogger } from "./logger.js";
import type { ResourceState } from "./resource-state.js";
import type { ResourceType } from "./resource-type.js";
import type { XdsStream } from "./transport.js";
import { StatusCode } from "./xds-error.js";

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

/** Writes a request; once it is on the stream, starts the does-not-exist timers of `states` (A57), unless the call ended. */
export function sendAndArmTimers<Req>(
  host: CallHost,
  stream: XdsStream<Req, unknown>,
  request: Req,
  states: readonly ResourceState[],
  live: () => boolean,
): void {
  stream.send(request).then(
    () => {
      if (live()) for (const state of states) host.updater.maybeStartTimer(state);
    },
    () => {
      // The stream ended; the read loop reports why.
    },
  );
}

/** The `error_detail` of a NACK. */
export function nackStatus(detail: string): Status {
  return create(StatusSchema, { code: StatusCode.INVALID_ARGUMENT, message: detail });
}

/** The registered type of a response, or undefined (logged) for a type nobody watches. */
export function responseType(host: CallHost, typeUrl: string): ResourceType<unknown> | undefined {
  const type = host.context.types.get(typeUrl);
  if (!type) host.log.warn(`ignoring a response of unknown resource type ${typeUrl}`);
  return type;
}

/** The AdsCall over a stream, given how a protocol sends its requests and applies a response. */
export function adsCall<Res>(
  id: number,
  stream: XdsStream<unknown, Res>,
  update: (typeUrl: string) => void,
  apply: (response: Res) => void,
  onCancel: () => void,
): AdsCall {
  return {
    id,
    update,
    async next() {
      const result = await stream.responses.next();
      if (result.done) return undefined;
      return () => apply(result.value);
    },
    cancel() {
      onCancel();
      stream.cancel();
    },
  };
}
