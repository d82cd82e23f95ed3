// The server's Listener, as its watch reports it, turned into the generation connections are accepted under (A36):
// - a good server Listener whose address is the listening one becomes a pending generation, applied once every RDS
//   resource it names has been received or has failed; a newer Listener replaces a pending one; applying it drains
//   the previous generation's connections. A Listener equal to the one in use changes nothing;
// - a Listener for another address, a client Listener, or a resource error (it does not exist, or it was rejected
//   and there is no good version) means not serving: the generation in use drains, new connections are closed;
// - an ambient error (the control plane unreachable, a rejected update with a good version in use) changes nothing.
import { equals } from "@bufbuild/protobuf";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import type { ListenerUpdate, ResourceWatcher, ServerListenerUpdate, XdsError } from "@xdskit/xds-client";
import type { Generation } from "../config/generation.js";
import type { ServerLogger } from "../logging.js";
import { addressMismatch, type ListeningAddress } from "./address-match.js";
import type { ServingStatusReporter } from "./serving-status.js";

export interface ListenerStateOptions {
  readonly resourceName: string;
  readonly listening: ListeningAddress;
  readonly createGeneration: (listener: ServerListenerUpdate) => Generation;
  readonly drainGraceMs: number;
  readonly status: ServingStatusReporter;
  readonly logger: ServerLogger;
}

export interface ListenerState {
  /** The Listener watch's watcher. */
  readonly watcher: ResourceWatcher<ListenerUpdate>;
  /** The generation new connections are accepted under; undefined while not serving. */
  active(): Generation | undefined;
  /** Stops: drops a pending generation and retires the active one (its connections drain within graceMs). */
  close(graceMs: number): void;
}

function sameListener(a: ServerListenerUpdate, b: ServerListenerUpdate): boolean {
  return a === b || equals(ListenerSchema, a.raw, b.raw);
}

export function createListenerState(options: ListenerStateOptions): ListenerState {
  const { resourceName, status, logger } = options;
  let current: Generation | undefined;
  let pending: Generation | undefined;
  let closed = false;

  function dropPending(): void {
    pending?.dispose();
    pending = undefined;
  }

  function notServing(reason: string): void {
    dropPending();
    if (current !== undefined) {
      current.retire(options.drainGraceMs);
      current = undefined;
    }
    status.set(false, reason);
  }

  function apply(generation: Generation): void {
    const previous = current;
    current = generation;
    status.set(true);
    previous?.retire(options.drainGraceMs);
  }

  function update(listener: ServerListenerUpdate): void {
    if (current !== undefined && sameListener(current.listener, listener)) {
      dropPending();
      return;
    }
    if (pending !== undefined && sameListener(pending.listener, listener)) return;
    dropPending();
    const generation = options.createGeneration(listener);
    pending = generation;
    generation.whenReady(() => {
      if (pending !== generation || closed) return;
      pending = undefined;
      apply(generation);
    });
  }

  return {
    watcher: {
      onResourceChanged(result) {
        if (closed) return;
        if (!result.ok) {
          notServing(`Listener ${resourceName}: ${result.error.message}`);
          return;
        }
        const listener = result.resource;
        if (listener.kind !== "server") {
          notServing(`Listener ${resourceName} is a client Listener (api_listener), not a server Listener`);
          return;
        }
        const mismatch = addressMismatch(listener.address, options.listening);
        if (mismatch !== undefined) {
          notServing(`Listener ${resourceName}: ${mismatch}`);
          return;
        }
        update(listener);
      },
      onAmbientError(error: XdsError) {
        if (closed) return;
        logger.warn(`Listener ${resourceName}: ${error.message} (the configuration in use stays)`);
      },
      onAmbientErrorCleared() {},
    },
    active: () => current,
    close(graceMs) {
      closed = true;
      dropPending();
      current?.retire(graceMs);
      current = undefined;
    },
  };
}
