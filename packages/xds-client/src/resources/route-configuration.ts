// RouteConfiguration (RDS, or inline in a Listener) decoded with gRPC's rules: virtual hosts and their domains, each
// route's match (route-action.ts reads its action), the cluster specifier plugins, and the resource type.
import type { Any } from "@bufbuild/protobuf/wkt";
import type {
  ClusterSpecifierPluginView as ClusterSpecifierPluginProto,
  RouteMatchView as RouteMatchProto,
  RouteView as RouteProto,
} from "../gen/envoy/config/route/v3/route_components_view.js";
import { type RouteConfigurationView, RouteConfigurationViewReader } from "../gen/envoy/config/route/v3/route_view.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";
import { decodeResource, type ResourceMessage } from "./decode-view.js";
import { extractExtension, type TypedConfig, toTypedConfig } from "./extension.js";
import { parseFilterOverrides } from "./filter-overrides.js";
import { perMillion } from "./fraction.js";
import {
  type HeaderMatcher,
  isValidDomainPattern,
  type PathMatcher,
  parseHeaderMatcher,
  regexProblem,
} from "./matchers.js";
import { OPTIONAL_UNSUPPORTED, type ParseState, parseRetryPolicy, parseRouteAction } from "./route-action.js";
import type {
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfigurationBody,
  RouteConfigurationUpdate,
  RouteMatch,
  VirtualHost,
} from "./route-types.js";
import { EMPTY, fieldPath, keptList, type ValidationErrors } from "./validation.js";

const SUPPORTED_CLUSTER_SPECIFIER_PLUGINS = new Set(["grpc.lookup.v1.RouteLookupClusterSpecifier"]);
function isUsablePrefix(prefix: string): boolean {
  if (prefix === "") return true;
  if (prefix[0] !== "/") return false;
  const parts = prefix.slice(1).split("/", 3);
  if (parts.length > 2) return false;
  return !(parts.length === 2 && parts[0] === "");
}

/** A path of the exact form `/service/method` (else gRPC ignores the route). */
function isUsablePath(path: string): boolean {
  if (path === "" || path[0] !== "/") return false;
  const parts = path.slice(1).split("/", 3);
  return parts.length === 2 && parts[0] !== "" && parts[1] !== "";
}

/** Returns undefined when the route is to be ignored (possibly after reporting an error). */
function parseRouteMatch(proto: RouteMatchProto, path: string, errors: ValidationErrors): RouteMatch | undefined {
  if (proto.queryParameters.length > 0) return undefined;
  const caseSensitive = proto.caseSensitive ?? true;
  let pathMatcher: PathMatcher;
  const spec = proto.pathSpecifier;
  switch (spec.case) {
    case "prefix":
      if (!isUsablePrefix(spec.value)) return undefined;
      pathMatcher = Object.freeze({ type: "prefix", value: spec.value, caseSensitive });
      break;
    case "path":
      if (!isUsablePath(spec.value)) return undefined;
      pathMatcher = Object.freeze({ type: "path", value: spec.value, caseSensitive });
      break;
    case "safeRegex": {
      const invalid = regexProblem(spec.value.regex, !caseSensitive);
      if (invalid !== undefined) {
        errors.add(`${path}.safe_regex.regex`, `error creating path matcher: invalid regex: ${invalid}`);
        return undefined;
      }
      pathMatcher = Object.freeze({ type: "safe_regex", regex: spec.value.regex, caseSensitive });
      break;
    }
    default:
      errors.add(path, "invalid path specifier");
      return undefined;
  }
  let headers: HeaderMatcher[] | undefined;
  for (let i = 0; i < proto.headers.length; i++) {
    const header = parseHeaderMatcher(proto.headers[i]!, `${path}.headers[${i}]`, errors);
    if (header === undefined) continue;
    headers ??= [];
    headers.push(header);
  }
  let fractionPerMillion: number | undefined;
  const fraction = proto.runtimeFraction?.defaultValue;
  if (fraction !== undefined) {
    fractionPerMillion = perMillion(
      fraction.numerator,
      fraction.denominator,
      `${path}.runtime_fraction.default_value.denominator`,
      errors,
    );
  }
  const headerList = headers === undefined ? EMPTY : keptList(headers);
  return Object.freeze(
    fractionPerMillion === undefined
      ? { path: pathMatcher, headers: headerList }
      : { path: pathMatcher, headers: headerList, fractionPerMillion },
  );
}

const NON_FORWARDING: RouteAction = Object.freeze({ type: "non_forwarding" });
const UNSUPPORTED: RouteAction = Object.freeze({ type: "unsupported" });

function parseRoute(
  proto: RouteProto,
  path: string,
  vhostRetryPolicy: RetryPolicy | undefined,
  state: ParseState,
): Route | undefined {
  const { errors } = state;
  if (proto.match === undefined) {
    errors.add(`${path}.match`, "field not present");
    return undefined;
  }
  const match = parseRouteMatch(proto.match, `${path}.match`, errors);
  if (match === undefined) return undefined;
  let action: RouteAction | undefined;
  if (proto.action.case === "route") {
    action = parseRouteAction(proto.action.value, `${path}.route`, vhostRetryPolicy, state);
    if (action === undefined) return undefined;
  } else if (proto.action.case === "nonForwardingAction") {
    action = NON_FORWARDING;
  } else {
    action = UNSUPPORTED;
  }
  const typedPerFilterConfig = parseFilterOverrides(
    proto.typedPerFilterConfig,
    `${path}.typed_per_filter_config`,
    errors,
  );
  return Object.freeze({ name: proto.name, match, action, typedPerFilterConfig });
}

function parseClusterSpecifierPlugins(
  plugins: readonly ClusterSpecifierPluginProto[],
  path: string,
  errors: ValidationErrors,
): Map<string, TypedConfig | null> {
  const table = new Map<string, TypedConfig | null>();
  for (let i = 0; i < plugins.length; i++) {
    const plugin = plugins[i]!;
    const extensionPath = fieldPath(path, `cluster_specifier_plugins[${i}].extension`);
    if (plugin.extension === undefined) {
      errors.add(extensionPath, "field not present");
      continue;
    }
    const name = plugin.extension.name;
    if (table.has(name)) {
      errors.add(`${extensionPath}.name`, `duplicate name "${name}"`);
    } else {
      // Stands in until the config is known, so routes naming a broken plugin are not reported again.
      table.set(name, OPTIONAL_UNSUPPORTED);
    }
    const extension = extractExtension(plugin.extension.typedConfig, `${extensionPath}.typed_config`, errors);
    if (extension === undefined) continue;
    if (!SUPPORTED_CLUSTER_SPECIFIER_PLUGINS.has(extension.type)) {
      if (!plugin.isOptional) errors.add(extension.path, "unsupported ClusterSpecifierPlugin type");
      continue;
    }
    table.set(name, toTypedConfig(extension));
  }
  return table;
}

/**
 * Validates a RouteConfiguration with gRPC's rules (A28, A31, A39, A42, A44, RLS plugins). `path` prefixes every
 * reported field (empty for an RDS resource; the `route_config` field for an inline one).
 */
export function parseRouteConfigurationBody(
  proto: RouteConfigurationView,
  path: string,
  context: DecodeContext,
  errors: ValidationErrors,
): RouteConfigurationBody {
  const state: ParseState = {
    context,
    errors,
    plugins: parseClusterSpecifierPlugins(proto.clusterSpecifierPlugins, path, errors),
    pluginsUsed: new Set(),
  };
  const virtualHosts: VirtualHost[] = [];
  for (let i = 0; i < proto.virtualHosts.length; i++) {
    const vhost = proto.virtualHosts[i]!;
    const vhostPath = fieldPath(path, `virtual_hosts[${i}]`);
    for (let j = 0; j < vhost.domains.length; j++) {
      const domain = vhost.domains[j]!;
      if (!isValidDomainPattern(domain)) errors.add(`${vhostPath}.domains[${j}]`, `invalid domain pattern "${domain}"`);
    }
    if (vhost.domains.length === 0) errors.add(`${vhostPath}.domains`, "must be non-empty");
    const typedPerFilterConfig = parseFilterOverrides(
      vhost.typedPerFilterConfig,
      `${vhostPath}.typed_per_filter_config`,
      errors,
    );
    const retryPolicy =
      vhost.retryPolicy === undefined
        ? undefined
        : parseRetryPolicy(vhost.retryPolicy, `${vhostPath}.retry_policy`, errors);
    const routes: Route[] = [];
    for (let j = 0; j < vhost.routes.length; j++) {
      const route = parseRoute(vhost.routes[j]!, `${vhostPath}.routes[${j}]`, retryPolicy, state);
      if (route !== undefined) routes.push(route);
    }
    virtualHosts.push(
      Object.freeze({
        name: vhost.name,
        domains: Object.freeze([...vhost.domains]),
        routes: keptList(routes),
        typedPerFilterConfig,
        ...(retryPolicy === undefined ? {} : { retryPolicy }),
      }),
    );
  }
  const clusterSpecifierPlugins: Record<string, TypedConfig> = {};
  for (const name of state.pluginsUsed) {
    const plugin = state.plugins.get(name);
    if (plugin) clusterSpecifierPlugins[name] = plugin;
  }
  return Object.freeze({
    virtualHosts: keptList(virtualHosts),
    clusterSpecifierPlugins: Object.freeze(clusterSpecifierPlugins),
  });
}

const ROUTE_CONFIGURATION: ResourceMessage<RouteConfigurationView> = {
  typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  label: "RouteConfiguration",
  reader: RouteConfigurationViewReader,
  nameOf: (view) => view.name,
};

/** RDS: `envoy.config.route.v3.RouteConfiguration`, validated as gRPC clients do. */
export const routeConfigurationResourceType: ResourceType<RouteConfigurationUpdate> = Object.freeze({
  typeUrl: ROUTE_CONFIGURATION.typeUrl,
  typeName: "RouteConfigurationResource",
  allResourcesRequiredInSotW: false,
  usesWrapper: false,
  decode(resource: Any, context: DecodeContext): DecodeResult<RouteConfigurationUpdate> {
    return decodeResource(resource, ROUTE_CONFIGURATION, (view, errors) => ({
      name: view.name,
      ...parseRouteConfigurationBody(view, "", context, errors),
    }));
  },
});
