// The open ADS streams of a server, indexed by what they subscribe to, and the fan-out of resource changes to them.

import { Code } from "@connectrpc/connect";
import { WakeIndex } from "../held/wake-index.js";
import type { BreakOptions } from "../hooks/hooks.js";
import type { ServedResources } from "../resources/served.js";
import type { AdsStream } from "../streams/stream-base.js";
import type { StreamInfo } from "../streams/stream-info.js";
import type { ChangedVariants } from "../subscriptions/change-scope.js";
import type { TypeSubscription } from "../subscriptions/subscription.js";

export interface StreamRegistry {
  add(stream: AdsStream): void;
  remove(stream: AdsStream): void;
  /** A stream's subscription of a type changed: the changes that may concern it must reach it. */
  subscribed(stream: AdsStream, sub: TypeSubscription): void;
  /** A copy: streams may end (and leave the registry) while the caller walks it. */
  all(): AdsStream[];
  find(streamId: number): AdsStream | undefined;
  infos(): StreamInfo[];
  /** A resource set changed: marks dirty the streams served from it that the change may concern. */
  setChanged(set: ServedResources, changed: ChangedVariants): void;
  /** The resource source changed: every stream is served from it, in one view or another. */
  sourceChanged(changed: ChangedVariants): void;
  /** The break-streams test hook: ends the streams it names; returns how many. */
  breakStreams(options: BreakOptions): number;
}

export function createStreamRegistry(): StreamRegistry {
  const streams = new Set<AdsStream>();
  /** The streams by what they subscribe to, for changes to find the streams they may concern. */
  const wake = new WakeIndex<AdsStream>();
  return {
    add(stream) {
      streams.add(stream);
    },
    remove(stream) {
      streams.delete(stream);
      wake.forget(stream);
    },
    subscribed(stream, sub) {
      wake.update(stream, sub);
    },
    all: () => [...streams],
    find: (streamId) => [...streams].find((s) => s.id === streamId),
    infos: () => [...streams].map((stream) => stream.info()),
    setChanged(set, changed) {
      for (const stream of wake.candidates(changed) ?? streams) {
        if (stream.uses(set)) stream.markDirty(changed.keys(), changed);
      }
    },
    sourceChanged(changed) {
      for (const stream of wake.candidates(changed) ?? streams) stream.markDirty(changed.keys(), changed);
    },
    breakStreams(options) {
      let count = 0;
      for (const stream of [...streams]) {
        if (options.streamId !== undefined && stream.id !== options.streamId) continue;
        stream.end(options.code ?? Code.Unavailable, "broken", options.message ?? "stream broken by a test hook");
        count++;
      }
      return count;
    },
  };
}
