// What a gRPC client would make of a set of resources before they are served: each resource decoded and validated
// by @xdskit/xds-client's own LDS/RDS/CDS/EDS types (what it would NACK, with the field path of each problem), and
// the references between resources (listener → route configuration → cluster → endpoints) that point at nothing.
// Used by `xdskit serve` on every load (docs/decisions.md#cli-serve-checks); any command that serves a set of
// resources can run the same checks.
import type { Message, Registry } from "@bufbuild/protobuf";
import { type Any, anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { xdsRegistry } from "@xdskit/protos";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  type ClusterUpdate,
  clusterResourceType,
  type DecodeContext,
  type EndpointUpdate,
  endpointResourceType,
  type ListenerUpdate,
  listenerResourceType,
  parseBootstrap,
  type ResourceType,
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
} from "@xdskit/xds-client";
import { shortTypeName } from "./resource-diff.js";

/** A resource to check: its message, its name, and where it was read (`file[index]`, or any label). */
export interface CheckedResource {
  readonly message: Message;
  readonly name: string;
  readonly where: string;
}

export interface ResourceWarning {
  /** `nack`: a gRPC client would reject the resource; `reference`: it names a resource that is not in the set. */
  readonly kind: "nack" | "reference";
  readonly where: string;
  /** The short type name, e.g. `Cluster`. */
  readonly type: string;
  readonly name: string;
  /** The problems, each with its field path (`lb_policy: ...`, `virtualHosts[0].routes[1]...`). */
  readonly message: string;
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/**
 * Certificate provider instance names are the clients' and servers' own (their bootstraps), not serve's: every name
 * a TLS context gives is taken as configured. A node whose bootstrap lacks it NACKs the resource itself.
 */
class EveryInstanceName<V> extends Map<string, V> {
  override has(): boolean {
    return true;
  }
}

// Validation as a current gRPC client does it: every experimental switch on (their defaults), served by `self`.
const CONTEXT: DecodeContext = (() => {
  const parsed = parseBootstrap({
    xds_servers: [{ server_uri: "localhost:18000", channel_creds: [{ type: "insecure" }] }],
    node: { id: "xdskit-check" },
  });
  const bootstrap = { ...parsed, certificateProviders: new EveryInstanceName(parsed.certificateProviders) };
  return {
    server: bootstrap.xdsServers[0]!,
    bootstrap,
    features: {
      dataErrorHandling: true,
      dynamicParameters: true,
      orcaLrsPropagation: true,
      fallback: true,
      federation: true,
    },
  };
})();

const TYPES: Readonly<Record<string, ResourceType<unknown>>> = {
  "envoy.config.listener.v3.Listener": listenerResourceType,
  "envoy.config.route.v3.RouteConfiguration": routeConfigurationResourceType,
  "envoy.config.cluster.v3.Cluster": clusterResourceType,
  "envoy.config.endpoint.v3.ClusterLoadAssignment": endpointResourceType,
};

interface Decoded {
  readonly listeners: Map<string, [CheckedResource, ListenerUpdate]>;
  readonly routes: Map<string, [CheckedResource, RouteConfigurationUpdate]>;
  readonly clusters: Map<string, [CheckedResource, ClusterUpdate]>;
  readonly endpoints: Map<string, [CheckedResource, EndpointUpdate]>;
}

function pack(message: Message): Any | undefined {
  const schema = xdsRegistry.getMessage(message.$typeName);
  return schema ? anyPack(schema, message) : undefined;
}

/** A listener without `api_listener` is for servers (Envoy, xDS-enabled gRPC servers), not for client channels. */
function isServerListener(resource: CheckedResource): boolean {
  return (resource.message as { apiListener?: unknown }).apiListener === undefined;
}

/**
 * Every warning about `resources`, in their order: first what a gRPC client would NACK (one warning per resource,
 * every problem in it), then each reference that points at a resource missing from the set. Resources of other
 * types, and listeners without `api_listener`, are not checked.
 */
export function checkResources(resources: readonly CheckedResource[]): ResourceWarning[] {
  const warnings: ResourceWarning[] = [];
  const decoded: Decoded = { listeners: new Map(), routes: new Map(), clusters: new Map(), endpoints: new Map() };
  const names = new Map<string, Set<string>>();
  for (const resource of resources) {
    const typeName = resource.message.$typeName;
    const seen = names.get(typeName) ?? new Set<string>();
    names.set(typeName, seen.add(resource.name));
    const type = TYPES[typeName];
    if (!type || (type === listenerResourceType && isServerListener(resource))) continue;
    const any = pack(resource.message);
    const result = any ? type.decode(any, CONTEXT) : { ok: false as const, error: "cannot encode" };
    const warning = { where: resource.where, type: shortTypeName(typeName), name: resource.name };
    if (!result.ok) {
      warnings.push({ ...warning, kind: "nack", message: `a gRPC client would NACK it: ${result.error}` });
      continue;
    }
    const entry = [resource, result.value] as never;
    if (type === listenerResourceType) decoded.listeners.set(resource.name, entry);
    else if (type === routeConfigurationResourceType) decoded.routes.set(resource.name, entry);
    else if (type === clusterResourceType) decoded.clusters.set(resource.name, entry);
    else decoded.endpoints.set(resource.name, entry);
  }
  const has = (typeName: string, name: string) => names.get(typeName)?.has(name) === true;
  warnings.push(...references(decoded, has));
  return warnings;
}

type Has = (typeName: string, name: string) => boolean;

function references(decoded: Decoded, has: Has): ResourceWarning[] {
  const warnings: ResourceWarning[] = [];
  const warn = (resource: CheckedResource, message: string) =>
    warnings.push({
      kind: "reference",
      where: resource.where,
      type: shortTypeName(resource.message.$typeName),
      name: resource.name,
      message,
    });
  for (const [resource, listener] of decoded.listeners.values()) {
    if (listener.kind !== "client") continue;
    if (listener.route.type === "rds") {
      const route = listener.route.routeConfigName;
      if (!has("envoy.config.route.v3.RouteConfiguration", route)) {
        warn(resource, `apiListener.apiListener.rds.routeConfigName: no RouteConfiguration "${route}" is served`);
      }
    } else {
      const hcm = (resource.message as { apiListener?: { apiListener?: Any } }).apiListener?.apiListener;
      const inline = hcm ? inlineRoutes(hcm, xdsRegistry) : undefined;
      for (const problem of inline ? routeProblems(inline, "apiListener.apiListener.routeConfig.", has) : []) {
        warn(resource, problem);
      }
    }
  }
  for (const [resource] of decoded.routes.values()) {
    for (const problem of routeProblems(resource.message as RouteConfiguration, "", has)) warn(resource, problem);
  }
  for (const [resource, cluster] of decoded.clusters.values()) {
    if (cluster.type === "eds") {
      const service = cluster.edsServiceName || resource.name;
      if (!has("envoy.config.endpoint.v3.ClusterLoadAssignment", service)) {
        warn(resource, `no endpoints: no ClusterLoadAssignment "${service}" is served`);
      }
    } else if (cluster.type === "aggregate") {
      cluster.prioritizedClusterNames.forEach((name, i) => {
        if (!has("envoy.config.cluster.v3.Cluster", name)) {
          warn(resource, `clusterType.typedConfig.clusters[${i}]: no Cluster "${name}" is served`);
        }
      });
    }
  }
  for (const [resource, endpoints] of decoded.endpoints.values()) {
    const count = endpoints.priorities.reduce(
      (sum, p) => sum + p.localities.reduce((n, l) => n + l.endpoints.length, 0),
      0,
    );
    if (count === 0) warn(resource, "no endpoints: calls to its cluster fail UNAVAILABLE");
  }
  return warnings;
}

function inlineRoutes(hcm: Any, registry: Registry): RouteConfiguration | undefined {
  if (!hcm.typeUrl.endsWith(`/${HCM}`)) return undefined;
  const message = anyUnpack(hcm, registry) as { routeSpecifier?: { case?: string; value?: unknown } } | undefined;
  return message?.routeSpecifier?.case === "routeConfig"
    ? (message.routeSpecifier.value as RouteConfiguration)
    : undefined;
}

/** Each route of `config` that sends calls to a cluster that is not served, with its path. */
function routeProblems(config: RouteConfiguration, prefix: string, has: Has): string[] {
  const problems: string[] = [];
  const missing = (name: string) => !has("envoy.config.cluster.v3.Cluster", name);
  config.virtualHosts.forEach((host, h) => {
    host.routes.forEach((route, r) => {
      if (route.action.case !== "route") return;
      const path = `${prefix}virtualHosts[${h}].routes[${r}].route`;
      const specifier = route.action.value.clusterSpecifier;
      if (specifier.case === "cluster" && missing(specifier.value)) {
        problems.push(`${path}.cluster: no Cluster "${specifier.value}" is served`);
      } else if (specifier.case === "weightedClusters") {
        specifier.value.clusters.forEach((entry, i) => {
          if (missing(entry.name)) {
            problems.push(`${path}.weightedClusters.clusters[${i}].name: no Cluster "${entry.name}" is served`);
          }
        });
      }
    });
  });
  return problems;
}

/** A warning as one line: `where Type name: message`. */
export function formatWarning(warning: ResourceWarning): string {
  return `${warning.where} ${warning.type} ${warning.name}: ${warning.message}`;
}
