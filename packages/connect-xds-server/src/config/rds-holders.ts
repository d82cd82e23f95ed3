// The RouteConfigurations the server's filter chains name through RDS: one watch per name, shared by every chain and
// every Listener generation that names it (reference counted), so a new Listener naming the same RDS resource waits
// for nothing and old connections see the same routes as new ones. A36's configuration error logging happens here:
// a warning when a RouteConfiguration becomes unusable or holds routes whose action is not `non_forwarding_action`,
// and one line when that ends.
import {
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";
import type { ServerLogger } from "../logging.js";

/** What the chains naming a RouteConfiguration have now. */
export type RouteState =
  | { readonly kind: "waiting" }
  | { readonly kind: "ok"; readonly routes: RouteConfigurationUpdate }
  | { readonly kind: "error"; readonly message: string };

export interface RdsHolder {
  readonly name: string;
  /** Replaced (never mutated) on each change, so a consumer may memoise on it. */
  readonly state: RouteState;
  /** Calls `listener` after each change of `state`; returns the function that stops it. */
  onChange(listener: () => void): () => void;
}

export interface RdsHolders {
  /** The holder of `name`, its watch started by the first acquirer. */
  acquire(name: string): RdsHolder;
  /** Gives back one acquisition; the watch stops with the last. */
  release(holder: RdsHolder): void;
  /** Stops every watch. */
  close(): void;
}

export interface RdsHoldersOptions {
  readonly client: XdsClient;
  readonly logger: ServerLogger;
}

interface Holder extends RdsHolder {
  state: RouteState;
  references: number;
  cancel: () => void;
  readonly listeners: Set<() => void>;
  /** What was last logged as wrong with it, to log once per episode. */
  loggedProblem: "broken" | "forwarding" | undefined;
}

/** Routes whose action is not `non_forwarding_action`, as `virtual host/route`. */
export function forwardingRoutes(routes: {
  readonly virtualHosts: RouteConfigurationUpdate["virtualHosts"];
}): string[] {
  const found: string[] = [];
  for (const vh of routes.virtualHosts) {
    vh.routes.forEach((route, index) => {
      if (route.action.type !== "non_forwarding")
        found.push(`${vh.name}/${route.name === "" ? `#${index}` : route.name}`);
    });
  }
  return found;
}

export function createRdsHolders(options: RdsHoldersOptions): RdsHolders {
  const { client } = options;
  const logger = options.logger.child("[rds]");
  const holders = new Map<string, Holder>();

  function setState(holder: Holder, state: RouteState): void {
    holder.state = state;
    for (const listener of [...holder.listeners]) {
      try {
        listener();
      } catch (error) {
        logger.error(`a listener of RouteConfiguration ${holder.name} threw`, error);
      }
    }
  }

  function logProblems(holder: Holder): void {
    const state = holder.state;
    if (state.kind === "error") {
      if (holder.loggedProblem !== "broken") {
        logger.warn(
          `RouteConfiguration ${holder.name} is unusable (${state.message}): calls on the filter chains that name it fail UNAVAILABLE until it is fixed`,
        );
        holder.loggedProblem = "broken";
      }
      return;
    }
    if (state.kind !== "ok") return;
    const forwarding = forwardingRoutes(state.routes);
    if (forwarding.length > 0) {
      // Logged on every update that still has them (A36), as their list may change.
      logger.warn(
        `RouteConfiguration ${holder.name}: routes ${forwarding.join(", ")} are not non_forwarding_action: calls that match them fail UNAVAILABLE`,
      );
      holder.loggedProblem = "forwarding";
      return;
    }
    if (holder.loggedProblem !== undefined) {
      logger.warn(`RouteConfiguration ${holder.name} is usable again`);
      holder.loggedProblem = undefined;
    }
  }

  function start(name: string): Holder {
    const holder: Holder = {
      name,
      state: { kind: "waiting" },
      references: 0,
      cancel: () => {},
      listeners: new Set(),
      loggedProblem: undefined,
      onChange(listener) {
        holder.listeners.add(listener);
        return () => holder.listeners.delete(listener);
      },
    };
    holder.cancel = client.watch(routeConfigurationResourceType, name, {
      onResourceChanged(result) {
        if (holders.get(name) !== holder) return;
        setState(
          holder,
          result.ok ? { kind: "ok", routes: result.resource } : { kind: "error", message: result.error.message },
        );
        logProblems(holder);
      },
      onAmbientError(error: XdsError) {
        // A88: the routes in use stay; the control plane's problem changes nothing for calls.
        logger.debug(`RouteConfiguration ${name}: ${error.message} (the routes in use stay)`);
      },
      onAmbientErrorCleared() {},
    });
    return holder;
  }

  return {
    acquire(name) {
      let holder = holders.get(name);
      if (holder === undefined) {
        holder = start(name);
        holders.set(name, holder);
      }
      holder.references++;
      return holder;
    },
    release(rds) {
      const holder = holders.get(rds.name);
      if (holder === undefined || holder !== rds) return;
      if (--holder.references > 0) return;
      holders.delete(rds.name);
      holder.listeners.clear();
      holder.cancel();
    },
    close() {
      for (const holder of holders.values()) {
        holder.listeners.clear();
        holder.cancel();
      }
      holders.clear();
    },
  };
}
