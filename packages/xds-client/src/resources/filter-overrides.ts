// `typed_per_filter_config` of a virtual host, a route or a weighted cluster, read with gRPC's rules (A39).
import { FilterConfigViewReader } from "../gen/envoy/config/route/v3/route_components_view.js";
import type { AnyView } from "../gen/google/protobuf/any_view.js";
import { decodeExtension, extractExtension, toTypedConfig } from "./extension.js";
import { httpFilterForOverrideType } from "./http-filters.js";
import type { FilterConfigOverride, FilterConfigOverrides } from "./route-types.js";
import type { ValidationErrors } from "./validation.js";

const EMPTY_OVERRIDES: FilterConfigOverrides = Object.freeze({});
const FILTER_CONFIG_TYPE = "envoy.config.route.v3.FilterConfig";
/** `typed_per_filter_config` (virtual host, route or weighted cluster) with gRPC's rules (A39). */
export function parseFilterOverrides(
  map: { readonly [key: string]: AnyView },
  path: string,
  errors: ValidationErrors,
): FilterConfigOverrides {
  let result: Record<string, FilterConfigOverride> | undefined;
  for (const key in map) {
    const entryPath = `${path}[${key}]`;
    if (key === "") errors.add(entryPath, "filter name must be non-empty");
    let extension = extractExtension(map[key], entryPath, errors);
    if (extension === undefined) continue;
    let isOptional = false;
    let disabled = false;
    if (extension.type === FILTER_CONFIG_TYPE) {
      const wrapper = decodeExtension(extension, FilterConfigViewReader);
      if (wrapper === undefined) {
        errors.add(extension.path, "could not parse FilterConfig");
        continue;
      }
      isOptional = wrapper.isOptional;
      disabled = wrapper.disabled;
      if (disabled) {
        // The filter is off for this scope: its config, if any, is never used, so it is not validated (grpc-go).
        result ??= {};
        result[key] = Object.freeze({ config: toTypedConfig(extension), isOptional, disabled });
        continue;
      }
      extension = extractExtension(wrapper.config, `${extension.path}.config`, errors);
      if (extension === undefined) continue;
    }
    const kind = httpFilterForOverrideType(extension.type);
    if (kind === undefined) {
      if (!isOptional) errors.add(extension.path, "unsupported filter type");
      continue;
    }
    const parsed = kind.parseOverride?.(extension, errors);
    result ??= {};
    result[key] = Object.freeze(
      parsed === undefined
        ? { config: toTypedConfig(extension), isOptional, disabled }
        : { config: toTypedConfig(extension), isOptional, disabled, parsed },
    );
  }
  return result === undefined ? EMPTY_OVERRIDES : Object.freeze(result);
}
