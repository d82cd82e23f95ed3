// The xDS resolver (A27): watches the target's Listener, then its RouteConfiguration (by RDS, or inline), and turns
// each usable pair into a config selector. A resource that goes away or becomes invalid (A88: a new error result)
// replaces the selector with an error that fails calls UNAVAILABLE, naming the resource by type and the node ID
// once (xds-errors.ts); ambient errors keep the last selector. A Listener that switches to another RDS name keeps the
// old selector until the new RouteConfiguration arrives. A server Listener (an `address`, no `api_listener`) under the
// target's name is not one a client can use: it fails calls as an invalid Listener does.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ClientListenerUpdate,
  listenerResourceType,
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";
import type { ConfigSelector } from "../balancer/config-selector.js";
import type { WorkSerializer } from "../shared/work-serializer.js";
import { describeXdsError, resourceLabel, withNodeId } from "../shared/xds-errors.js";
import { findVirtualHost } from "./route-match.js";
import { createRouteTable } from "./route-table.js";

type RouteBody = Pick<RouteConfigurationUpdate, "virtualHosts">;

export interface ResolverOptions {
  readonly client: XdsClient;
  readonly listenerName: string;
  /** Matched against virtual host domains. */
  readonly host: string;
  readonly random: () => number;
  readonly serializer: WorkSerializer;
  /** A new selector, or the error every call fails with until the next one. */
  readonly onUpdate: (update: ConfigSelector | ConnectError) => void;
  readonly onAmbientError?: (error: XdsError) => void;
}

export interface XdsResolver {
  /** What calls wait for until the first selector: `the xDS Listener "name" (LDS)`, or its RouteConfiguration. */
  waitingFor(): string;
  /** Stops every watch. */
  stop(): void;
}

/** Starts watching. */
export function startXdsResolver(options: ResolverOptions): XdsResolver {
  const { client, listenerName, host, serializer, onUpdate } = options;
  const nodeId = client.bootstrap.node.id;
  let listener: ClientListenerUpdate | undefined;
  let rdsName: string | undefined;
  let cancelRds: (() => void) | undefined;
  /** The last RouteConfiguration of `rdsName`, rebuilt when the Listener changes but keeps its RDS name. */
  let rdsRoutes: RouteBody | undefined;
  let stopped = false;

  const fail = (message: string) => onUpdate(new ConnectError(withNodeId(message, nodeId), Code.Unavailable));
  const listenerLabel = resourceLabel(listenerResourceType.typeUrl, listenerName);
  const routeLabel = (name: string) => resourceLabel(routeConfigurationResourceType.typeUrl, name);

  const build = (routes: RouteBody, source: string) => {
    if (listener === undefined) return;
    const index = findVirtualHost(host, routes.virtualHosts);
    if (index < 0) {
      fail(`${source}: no virtual host matches "${host}"`);
      return;
    }
    onUpdate(
      createRouteTable({
        virtualHost: routes.virtualHosts[index]!,
        httpFilters: listener.httpFilters,
        ...(listener.maxStreamDurationMs === undefined
          ? {}
          : { listenerMaxStreamDurationMs: listener.maxStreamDurationMs }),
        nodeId,
        random: options.random,
      }),
    );
  };

  const stopRds = () => {
    cancelRds?.();
    cancelRds = undefined;
    rdsName = undefined;
    rdsRoutes = undefined;
  };

  const watchRds = (name: string) => {
    stopRds();
    rdsName = name;
    cancelRds = client.watch(routeConfigurationResourceType, name, {
      onResourceChanged: (result) =>
        serializer.run(() => {
          if (stopped || rdsName !== name) return;
          if (result.ok) {
            rdsRoutes = result.resource;
            build(result.resource, routeLabel(name));
          } else {
            rdsRoutes = undefined;
            fail(describeXdsError(result.error));
          }
        }),
      onAmbientError: (error) => options.onAmbientError?.(error),
    });
  };

  const cancelLds = client.watch(listenerResourceType, listenerName, {
    onResourceChanged: (result) =>
      serializer.run(() => {
        if (stopped) return;
        if (!result.ok) {
          listener = undefined;
          stopRds();
          fail(describeXdsError(result.error));
          return;
        }
        if (result.resource.kind !== "client") {
          listener = undefined;
          stopRds();
          fail(`${listenerLabel} is a server Listener (no api_listener)`);
          return;
        }
        listener = result.resource;
        const route = listener.route;
        if (route.type === "inline") {
          stopRds();
          build(route.routeConfiguration, `${listenerLabel} (inline route_config)`);
        } else if (route.routeConfigName !== rdsName) {
          watchRds(route.routeConfigName);
        } else if (rdsRoutes !== undefined) {
          build(rdsRoutes, routeLabel(route.routeConfigName));
        }
      }),
    onAmbientError: (error) => options.onAmbientError?.(error),
  });

  return {
    waitingFor: () =>
      listener === undefined || rdsName === undefined
        ? withNodeId(`the ${listenerLabel} (LDS)`, nodeId)
        : withNodeId(`the ${routeLabel(rdsName)} (RDS) of Listener "${listenerName}"`, nodeId),
    stop() {
      stopped = true;
      cancelLds();
      stopRds();
    },
  };
}
