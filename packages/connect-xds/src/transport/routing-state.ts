// What a transport's calls route with: the resolver's latest config selector (or the error calls fail with), the
// clusters it holds, whether the transport is closed, and the calls waiting for any of that (or a picker) to change.
import { ConnectError } from "@connectrpc/connect";
import type { ConfigSelector } from "../balancer/config-selector.js";
import type { CallState } from "../call/call-context.js";
import type { ClusterEntry } from "../clusters/cluster-manager.js";

export interface RoutingStateOptions {
  /** A cluster the new selector routes to, held until the next selector (or close). */
  acquire(name: string): ClusterEntry;
  release(entry: ClusterEntry): void;
  /** What calls wait for while there is no selector (the resolver's Listener or RouteConfiguration). */
  configWaitingFor(): string;
}

export interface RoutingState {
  /** What calls read and wait on. */
  readonly state: CallState;
  readonly closed: ConnectError | undefined;
  /** Wakes every call waiting for a change. */
  notify(): void;
  /** The resolver's update: clusters of the new selector acquired, the previous ones released, waiting calls woken. */
  update(update: ConfigSelector | ConnectError): void;
  /** From now on, calls fail with `reason` (waiting ones once `notify()` wakes them). */
  close(reason: ConnectError): void;
  /** Releases every cluster held. */
  releaseClusters(): void;
}

export function createRoutingState(options: RoutingStateOptions): RoutingState {
  let listeners: (() => void)[] = [];
  let selector: ConfigSelector | ConnectError | undefined;
  let clusters = new Map<string, ClusterEntry>();
  let closed: ConnectError | undefined;

  const notify = () => {
    if (listeners.length === 0) return;
    const current = listeners;
    listeners = [];
    for (const listener of current) listener();
  };

  const state: CallState = {
    get selector() {
      return selector;
    },
    get clusters() {
      return clusters;
    },
    get closed() {
      return closed;
    },
    configWaitingFor: () => options.configWaitingFor(),
    onChange(listener) {
      listeners.push(listener);
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    release: (entry) => options.release(entry),
  };

  return {
    state,
    get closed() {
      return closed;
    },
    notify,
    update(update) {
      const next = new Map<string, ClusterEntry>();
      if (!(update instanceof ConnectError)) for (const name of update.clusters) next.set(name, options.acquire(name));
      for (const entry of clusters.values()) options.release(entry);
      clusters = next;
      selector = update;
      notify();
    },
    close(reason) {
      closed = reason;
    },
    releaseClusters() {
      for (const entry of clusters.values()) options.release(entry);
      clusters = new Map();
    },
  };
}
