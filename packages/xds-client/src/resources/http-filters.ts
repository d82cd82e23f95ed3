import { RouterViewReader } from "../gen/envoy/extensions/filters/http/router/v3/router_view.js";
import { decodeExtension, type XdsExtension } from "./extension.js";
import type { ServerHttpFilterConfig } from "./http-filter-config.js";
import { parseRbacConfig, parseRbacOverride } from "./rbac.js";
import type { ValidationErrors } from "./validation.js";

/** What the decoders know of one HTTP filter type (gRPC's HTTP filter registry, A39). */
interface HttpFilterKind {
  /** Full message name of the filter's top-level config. */
  readonly configType: string;
  /** Full message names accepted in `typed_per_filter_config` for this filter. */
  readonly overrideTypes: readonly string[];
  readonly terminal: boolean;
  readonly onClients: boolean;
  readonly onServers: boolean;
  /** Whether `typed_config` must be the filter's serialized message (true for every filter gRPC ships). */
  readonly needsMessage: boolean;
  /** Fully validates the serialized config (only where this package has the message definition). */
  readonly validate?: (extension: XdsExtension, errors: ValidationErrors) => void;
  /** For filters servers run: the validated config (undefined after reporting a problem). */
  readonly parseServer?: (extension: XdsExtension, errors: ValidationErrors) => ServerHttpFilterConfig | undefined;
  /** For filters servers run: a validated `typed_per_filter_config` override (undefined after reporting). */
  readonly parseOverride?: (extension: XdsExtension, errors: ValidationErrors) => ServerHttpFilterConfig | undefined;
}

const ROUTER_CONFIG: ServerHttpFilterConfig = Object.freeze({ type: "router" });

function rbacConfig(
  parse: typeof parseRbacConfig,
): (extension: XdsExtension, errors: ValidationErrors) => ServerHttpFilterConfig | undefined {
  return (extension, errors) => {
    const config = parse(extension, errors);
    return config === undefined ? undefined : Object.freeze({ type: "rbac", ...config });
  };
}

const ROUTER = "envoy.extensions.filters.http.router.v3.Router";

function validateRouter(extension: XdsExtension, errors: ValidationErrors): void {
  if (decodeExtension(extension, RouterViewReader) === undefined) {
    errors.add(extension.path, "could not parse router filter config");
  }
}

/**
 * The filters gRPC clients and servers implement (A39's registry: each says whether clients, servers or both run
 * it). The router and RBAC configs are validated here; the client-only ones are carried as the serialized message for
 * the transport to read.
 */
const KINDS: readonly HttpFilterKind[] = [
  {
    configType: ROUTER,
    overrideTypes: [],
    terminal: true,
    onClients: true,
    onServers: true,
    needsMessage: true,
    validate: validateRouter,
    parseServer: () => ROUTER_CONFIG,
  },
  {
    configType: "envoy.extensions.filters.http.fault.v3.HTTPFault",
    overrideTypes: ["envoy.extensions.filters.http.fault.v3.HTTPFault"],
    terminal: false,
    onClients: true,
    onServers: false,
    needsMessage: true,
  },
  {
    configType: "envoy.extensions.filters.http.rbac.v3.RBAC",
    overrideTypes: ["envoy.extensions.filters.http.rbac.v3.RBACPerRoute"],
    terminal: false,
    onClients: false,
    onServers: true,
    needsMessage: true,
    parseServer: rbacConfig(parseRbacConfig),
    parseOverride: rbacConfig(parseRbacOverride),
  },
  {
    configType: "envoy.extensions.filters.http.stateful_session.v3.StatefulSession",
    overrideTypes: ["envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute"],
    terminal: false,
    onClients: true,
    onServers: false,
    needsMessage: true,
  },
  {
    configType: "envoy.extensions.filters.http.gcp_authn.v3.GcpAuthnFilterConfig",
    overrideTypes: [],
    terminal: false,
    onClients: true,
    onServers: false,
    needsMessage: true,
  },
];

const BY_CONFIG_TYPE = new Map(KINDS.map((kind) => [kind.configType, kind]));
const BY_OVERRIDE_TYPE = new Map(KINDS.flatMap((kind) => kind.overrideTypes.map((type) => [type, kind] as const)));

export type { HttpFilterKind };

export function httpFilterForConfigType(type: string): HttpFilterKind | undefined {
  return BY_CONFIG_TYPE.get(type);
}

export function httpFilterForOverrideType(type: string): HttpFilterKind | undefined {
  return BY_OVERRIDE_TYPE.get(type);
}

/** Validates a filter config payload: the message form where required, then the filter's own checks. */
export function validateFilterConfig(kind: HttpFilterKind, extension: XdsExtension, errors: ValidationErrors): void {
  if (kind.needsMessage && extension.kind !== "bytes") {
    errors.add(extension.path, `could not parse ${extension.type} config`);
    return;
  }
  kind.validate?.(extension, errors);
}

export const ROUTER_FILTER_TYPE = ROUTER;
