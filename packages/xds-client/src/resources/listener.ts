import type { Any } from "@bufbuild/protobuf/wkt";
import { type ListenerView, ListenerViewReader } from "../gen/envoy/config/listener/v3/listener_view.js";
import {
  type HttpConnectionManagerView as HttpConnectionManager,
  HttpConnectionManagerViewReader,
} from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_view.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../resource-type.js";
import { decodeResource, type ResourceMessage } from "./decode-view.js";
import { parseDurationMs } from "./duration.js";
import { decodeExtension, extractExtension, toTypedConfig } from "./extension.js";
import { type HttpFilterKind, httpFilterForConfigType, validateFilterConfig } from "./http-filters.js";
import type { ClientListenerUpdate, HttpFilter, ListenerRouteSource, ListenerUpdate } from "./listener-types.js";
import { parseRouteConfigurationBody } from "./route-configuration.js";
import type { ValidationErrors } from "./validation.js";

export type { ClientListenerUpdate, HttpFilter, ListenerRouteSource, ListenerUpdate } from "./listener-types.js";

const HCM_TYPE = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

function parseHttpFilters(hcm: HttpConnectionManager, hcmPath: string, errors: ValidationErrors): HttpFilter[] {
  const path = `${hcmPath}.http_filters`;
  const filters: HttpFilter[] = [];
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
    if (!kind.onClients) {
      if (!filter.isOptional) errors.add(extension.path, "filter is not supported on clients");
      continue;
    }
    validateFilterConfig(kind, extension, errors);
    filters.push(Object.freeze({ name: filter.name, config: toTypedConfig(extension), isOptional: filter.isOptional }));
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

function parseHttpConnectionManager(
  hcm: HttpConnectionManager,
  path: string,
  context: DecodeContext,
  errors: ValidationErrors,
): Omit<ClientListenerUpdate, "kind" | "name" | "raw"> | undefined {
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
  const httpFilters = parseHttpFilters(hcm, path, errors);
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
    httpFilters: Object.freeze(httpFilters),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
  };
}

function parseListener(
  proto: ListenerView,
  context: DecodeContext,
  errors: ValidationErrors,
): Omit<ClientListenerUpdate, "kind" | "name" | "raw"> | undefined {
  if (proto.apiListener === undefined) {
    if (proto.address === undefined) {
      errors.add("", "Listener has neither address nor ApiListener");
    } else {
      errors.add("api_listener", "field not present (server-side Listeners are not supported by this client)");
    }
    return undefined;
  }
  const extension = extractExtension(proto.apiListener.apiListener, "api_listener.api_listener", errors);
  if (extension === undefined) return undefined;
  if (extension.type !== HCM_TYPE) {
    errors.add(extension.path, "unsupported filter type");
    return undefined;
  }
  const hcm = decodeExtension(extension, HttpConnectionManagerViewReader);
  if (hcm === undefined) {
    errors.add(extension.path, "could not parse HttpConnectionManager config");
    return undefined;
  }
  return parseHttpConnectionManager(hcm, extension.path, context, errors);
}

const LISTENER: ResourceMessage<ListenerView> = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  label: "Listener",
  reader: ListenerViewReader,
  nameOf: (view) => view.name,
};

/** LDS: client `envoy.config.listener.v3.Listener`s (an `api_listener` holding an HttpConnectionManager). */
export const listenerResourceType: ResourceType<ListenerUpdate> = Object.freeze({
  typeUrl: LISTENER.typeUrl,
  typeName: "ListenerResource",
  allResourcesRequiredInSotW: true,
  decode(resource: Any, context: DecodeContext): DecodeResult<ListenerUpdate> {
    return decodeResource(resource, LISTENER, (view, errors) => {
      const body = parseListener(view, context, errors);
      return body === undefined ? undefined : { kind: "client" as const, name: view.name, ...body };
    });
  },
});
