// An HttpConnectionManager, as gRPC clients (a Listener's `api_listener`) and servers (the one network filter of a
// server filter chain) read it: its HTTP filters through the A39 registry (clients and servers each keep the filters
// they run), its routes from RDS or inline, and A41's rule that `xff_num_trusted_hops` and
// `original_ip_detection_extensions` stay unset on both sides.
import type { HttpConnectionManagerView as HttpConnectionManager } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_view.js";
import type { DecodeContext } from "../wire/resource-type.js";
import { parseDurationMs } from "./duration.js";
import { extractExtension, toTypedConfig } from "./extension.js";
import type { ServerHttpFilterConfig } from "./http-filter-config.js";
import { type HttpFilterKind, httpFilterForConfigType, validateFilterConfig } from "./http-filters.js";
import type { HttpFilter, ListenerRouteSource, ServerHttpFilter } from "./listener-types.js";
import { parseRouteConfigurationBody } from "./route-configuration.js";
import { keptList, type ValidationErrors } from "./validation.js";

export const HCM_TYPE = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

/** Which side reads the HttpConnectionManager: the HTTP filters each keeps differ (A39). */
export type HcmSide = "client" | "server";

/** What an HttpConnectionManager configures, for the side that read it. */
export interface HttpConnectionManagerConfig<F> {
  readonly route: ListenerRouteSource;
  readonly httpFilters: readonly F[];
  /** A31 (clients): `common_http_protocol_options.max_stream_duration`. */
  readonly maxStreamDurationMs?: number;
}

function parseHttpFilters<F>(
  hcm: HttpConnectionManager,
  hcmPath: string,
  side: HcmSide,
  errors: ValidationErrors,
): F[] {
  const path = `${hcmPath}.http_filters`;
  const filters: F[] = [];
  const kinds: HttpFilterKind[] = [];
  const names = new Set<string>();
  const before = errors.count;
  for (let i = 0; i < hcm.httpFilters.length; i++) {
    const filter = hcm.httpFilters[i]!;
    const filterPath = `${path}[${i}]`;
    if (filter.name === "") {
      errors.add(`${filterPath}.name`, "empty filter name");
      continue;
    }
    if (names.has(filter.name)) {
      errors.add(`${filterPath}.name`, `duplicate HTTP filter name: ${filter.name}`);
      continue;
    }
    names.add(filter.name);
    const typedConfig = filter.configType.case === "typedConfig" ? filter.configType.value : undefined;
    const extension = extractExtension(typedConfig, `${filterPath}.typed_config`, errors);
    if (extension === undefined) continue;
    const kind = httpFilterForConfigType(extension.type);
    if (kind === undefined) {
      if (!filter.isOptional) errors.add(extension.path, "unsupported filter type");
      continue;
    }
    if (side === "client" ? !kind.onClients : !kind.onServers) {
      if (!filter.isOptional) errors.add(extension.path, `filter is not supported on ${side}s`);
      continue;
    }
    const checked = errors.count;
    validateFilterConfig(kind, extension, errors);
    if (filter.disabled && kind.terminal) {
      errors.add(`${filterPath}.disabled`, "the terminal filter cannot be disabled");
    }
    const base = {
      name: filter.name,
      config: toTypedConfig(extension),
      isOptional: filter.isOptional,
      disabled: filter.disabled,
    };
    if (side === "client") {
      filters.push(Object.freeze(base) satisfies HttpFilter as F);
    } else {
      const parsed: ServerHttpFilterConfig | undefined =
        errors.count === checked ? kind.parseServer?.(extension, errors) : undefined;
      if (parsed !== undefined)
        filters.push(Object.freeze({ ...base, filter: parsed }) satisfies ServerHttpFilter as F);
    }
    kinds.push(kind);
  }
  if (errors.count === before && filters.length === 0) errors.add(path, "expected at least one HTTP filter");
  const last = kinds.length - 1;
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i]!;
    if (i < last && kind.terminal) {
      errors.add(path, `terminal filter for config type ${kind.configType} must be the last filter in the chain`);
    } else if (i === last && !kind.terminal) {
      errors.add(path, `non-terminal filter for config type ${kind.configType} is the last filter in the chain`);
    }
  }
  return filters;
}

/** Validates an HttpConnectionManager read by `side`; `path` names it (its extension's value). */
export function parseHttpConnectionManager<F extends HttpFilter>(
  hcm: HttpConnectionManager,
  path: string,
  side: HcmSide,
  context: DecodeContext,
  errors: ValidationErrors,
): HttpConnectionManagerConfig<F> | undefined {
  if (hcm.xffNumTrustedHops !== 0) errors.add(`${path}.xff_num_trusted_hops`, "must be zero");
  if (hcm.originalIpDetectionExtensions.length > 0) {
    errors.add(`${path}.original_ip_detection_extensions`, "must be empty");
  }
  let maxStreamDurationMs: number | undefined;
  const maxStreamDuration = hcm.commonHttpProtocolOptions?.maxStreamDuration;
  if (maxStreamDuration !== undefined) {
    maxStreamDurationMs = parseDurationMs(
      maxStreamDuration,
      `${path}.common_http_protocol_options.max_stream_duration`,
      errors,
    );
  }
  const httpFilters = parseHttpFilters<F>(hcm, path, side, errors);
  let route: ListenerRouteSource | undefined;
  const spec = hcm.routeSpecifier;
  if (spec.case === "routeConfig") {
    const routeConfiguration = parseRouteConfigurationBody(spec.value, `${path}.route_config`, context, errors);
    route = Object.freeze({ type: "inline", routeConfiguration });
  } else if (spec.case === "rds") {
    const configSource = spec.value.configSource;
    const sourcePath = `${path}.rds.config_source`;
    if (configSource === undefined) {
      errors.add(sourcePath, "field not present");
    } else {
      const kind = configSource.configSourceSpecifier.case;
      if (kind !== "ads" && kind !== "self") errors.add(sourcePath, "ConfigSource does not specify ADS or SELF");
    }
    route = Object.freeze({ type: "rds", routeConfigName: spec.value.routeConfigName });
  } else {
    errors.add(path, "neither route_config nor rds fields are present");
  }
  if (route === undefined) return undefined;
  return {
    route,
    httpFilters: keptList(httpFilters),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
  };
}
