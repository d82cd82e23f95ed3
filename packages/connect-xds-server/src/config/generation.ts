// One applied (or about to be applied) server Listener: its filter chains ready for calls, the RDS resources they
// name, and the connections accepted under it. A36: a Listener change makes a new generation; the old one stops
// taking connections and drains the ones it has (GOAWAY, calls in flight finish, forced close after the drain grace
// time), while an RDS change reaches every generation that names the resource, connections included, without a
// drain. A generation gives its RDS holders back when it is retired and its last connection has closed.
import { Code } from "@connectrpc/connect";
import type { RbacLocal, RbacPeer, ServerFilterChain, ServerListenerUpdate } from "@xdskit/xds-client";
import type { ServerLogger } from "../logging.js";
import { compileRouteTable, type RouteTable } from "../routing/route-table.js";
import type { ServerFilterRegistry } from "../routing/server-filters.js";
import { forwardingRoutes, type RdsHolder, type RdsHolders, type RouteState } from "./rds-holders.js";

/** A connection as its generation sees it. */
export interface ServerConnection {
  /** Sends GOAWAY (or closes a connection still in its handshake); calls in flight finish; forced after graceMs. */
  drain(graceMs: number): void;
}

/** What a call reads of its connection: the chain it was accepted under and its two ends (A41's view). */
export interface ConnectionContext {
  readonly runtime: ChainRuntime;
  readonly peer: RbacPeer;
  readonly local: RbacLocal;
}

/** A filter chain with its routes compiled for calls. */
export interface ChainRuntime {
  readonly chain: ServerFilterChain;
  /** The routes calls use now; while its RDS resource is unusable, a table that fails every call UNAVAILABLE. */
  routeTable(): RouteTable;
}

export interface Generation {
  readonly listener: ServerListenerUpdate;
  /** The runtime of a chain of this Listener (a chain `selectFilterChain` returned for it). */
  runtimeOf(chain: ServerFilterChain): ChainRuntime | undefined;
  /** Whether every RDS resource it names has been received or has failed (A36: only then is it applied). */
  isReady(): boolean;
  /** Calls `callback` once, when it is ready (at once if it is). Not after `dispose`. */
  whenReady(callback: () => void): void;
  addConnection(connection: ServerConnection): void;
  removeConnection(connection: ServerConnection): void;
  readonly connectionCount: number;
  /** Stops taking connections, drains those it has, then gives back its RDS holders. */
  retire(graceMs: number): void;
  /** Gives back its RDS holders now (a generation never applied). */
  dispose(): void;
}

export interface GenerationOptions {
  readonly listener: ServerListenerUpdate;
  readonly holders: RdsHolders;
  readonly registry: ServerFilterRegistry;
  readonly nodeId: string;
  readonly random: () => number;
  readonly logger: ServerLogger;
}

function failingTable(message: string, nodeId: string): RouteTable {
  const denial = { code: Code.Unavailable, message: `${message} (xDS node ID "${nodeId}")` };
  return { forwardingRoutes: [], decide: () => denial };
}

function chainLabel(chain: ServerFilterChain): string {
  const where = chain.index < 0 ? "default_filter_chain" : `filter_chains[${chain.index}]`;
  return chain.name === "" ? where : `${where} "${chain.name}"`;
}

export function createGeneration(options: GenerationOptions): Generation {
  const { listener, holders, nodeId } = options;
  const acquired: RdsHolder[] = [];
  const runtimes = new Map<ServerFilterChain, ChainRuntime>();
  const connections = new Set<ServerConnection>();
  let retired = false;
  let released = false;
  /** Stops the RDS listeners `whenReady` registered. */
  const readyStops: (() => void)[] = [];

  const compile = (chain: ServerFilterChain, routes: Parameters<typeof compileRouteTable>[0]["routes"]) => {
    try {
      return compileRouteTable({
        routes,
        httpFilters: chain.httpFilters,
        registry: options.registry,
        nodeId,
        random: options.random,
      });
    } catch (error) {
      // Validated configuration compiles; should it not, every call on the chain fails rather than the server.
      const why = error instanceof Error ? error.message : String(error);
      options.logger.error(`${chainLabel(chain)}: its routes do not compile (${why}); its calls fail UNAVAILABLE`);
      return failingTable(`the routes of ${chainLabel(chain)} do not compile: ${why}`, nodeId);
    }
  };

  function runtimeFor(chain: ServerFilterChain): ChainRuntime {
    const source = chain.route;
    if (source.type === "inline") {
      const forwarding = forwardingRoutes(source.routeConfiguration);
      if (forwarding.length > 0) {
        options.logger.warn(
          `${chainLabel(chain)}: routes ${forwarding.join(", ")} are not non_forwarding_action: calls that match them fail UNAVAILABLE`,
        );
      }
      const table = compile(chain, source.routeConfiguration);
      return { chain, routeTable: () => table };
    }
    const holder = holders.acquire(source.routeConfigName);
    acquired.push(holder);
    let memoState: RouteState | undefined;
    let memoTable: RouteTable | undefined;
    return {
      chain,
      routeTable() {
        const state = holder.state;
        if (state === memoState && memoTable !== undefined) return memoTable;
        memoState = state;
        memoTable =
          state.kind === "ok"
            ? compile(chain, state.routes)
            : failingTable(
                state.kind === "error"
                  ? `RouteConfiguration ${holder.name} is unusable: ${state.message}`
                  : `RouteConfiguration ${holder.name} has not been received`,
                nodeId,
              );
        return memoTable;
      },
    };
  }

  for (const chain of listener.filterChains) runtimes.set(chain, runtimeFor(chain));
  if (listener.defaultFilterChain !== undefined) {
    runtimes.set(listener.defaultFilterChain, runtimeFor(listener.defaultFilterChain));
  }

  const isReady = () => acquired.every((holder) => holder.state.kind !== "waiting");

  function release(): void {
    if (released) return;
    released = true;
    for (const stop of readyStops.splice(0)) stop();
    for (const holder of acquired) holders.release(holder);
  }

  return {
    listener,
    runtimeOf: (chain) => runtimes.get(chain),
    isReady,
    whenReady(callback) {
      if (isReady()) {
        callback();
        return;
      }
      let called = false;
      const check = () => {
        if (called || released || !isReady()) return;
        called = true;
        for (const stop of readyStops.splice(0)) stop();
        callback();
      };
      for (const holder of acquired) readyStops.push(holder.onChange(check));
    },
    addConnection(connection) {
      connections.add(connection);
    },
    removeConnection(connection) {
      connections.delete(connection);
      if (retired && connections.size === 0) release();
    },
    get connectionCount() {
      return connections.size;
    },
    retire(graceMs) {
      if (retired) return;
      retired = true;
      for (const connection of [...connections]) connection.drain(graceMs);
      if (connections.size === 0) release();
    },
    dispose() {
      retired = true;
      release();
    },
  };
}
