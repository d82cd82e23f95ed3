// The RBAC HTTP filter's config (A41): `envoy.extensions.filters.http.rbac.v3.RBAC` on a Listener and `RBACPerRoute`
// in `typed_per_filter_config`, validated into RbacFilterConfig (rbac-types.ts). Refused (the resource is NACKed):
// the LOG action (docs/decisions.md#rbac-log-action), CEL conditions, header matchers on `grpc-*` or `:scheme`, the
// matcher-tree form (`matcher`), permission/principal kinds gRPC cannot evaluate (`matcher`, `uri_template`,
// `filter_state`), and audit loggers that are not optional (this package ships none).
import type { CidrRangeView } from "../gen/envoy/config/core/v3/address_view.js";
import type {
  PermissionView,
  PolicyView,
  PrincipalView,
  RBACView as RbacRulesView,
} from "../gen/envoy/config/rbac/v3/rbac_view.js";
import type { HeaderMatcherView } from "../gen/envoy/config/route/v3/route_components_view.js";
import {
  RBACPerRouteViewReader,
  RBACViewReader,
  type RBACView as RbacFilterView,
} from "../gen/envoy/extensions/filters/http/rbac/v3/rbac_view.js";
import type { PathMatcherView } from "../gen/envoy/type/matcher/v3/path_view.js";
import { compileStringMatcher } from "../mesh/string-match.js";
import { type CidrRange, parseCidrRange } from "../shared/ip-address.js";
import { decodeExtension, type XdsExtension } from "./extension.js";
import { parseHeaderMatcher, parseStringMatcher } from "./matchers.js";
import type { RbacFilterConfig, RbacPolicy, RbacRule, RbacRules } from "./rbac-types.js";
import { keptList, type ValidationErrors } from "./validation.js";

const ACTIONS = ["ALLOW", "DENY", "LOG"] as const;
const NO_RULES: RbacFilterConfig = Object.freeze({});

function parseCidr(view: CidrRangeView, path: string, errors: ValidationErrors): CidrRange | undefined {
  const range = parseCidrRange(view.addressPrefix, view.prefixLen);
  if (typeof range === "string") {
    errors.add(`${path}.address_prefix`, range);
    return undefined;
  }
  return range;
}

function parseHeader(view: HeaderMatcherView, path: string, errors: ValidationErrors): RbacRule | undefined {
  const name = view.name.toLowerCase();
  if (name.startsWith("grpc-")) {
    errors.add(`${path}.name`, `"${view.name}": matching grpc- headers is not supported (A41)`);
    return undefined;
  }
  if (name === ":scheme") {
    errors.add(`${path}.name`, `"${view.name}": matching :scheme is not supported (A41)`);
    return undefined;
  }
  const header = parseHeaderMatcher(view, path, errors);
  return header === undefined ? undefined : Object.freeze({ type: "header", header });
}

function parseUrlPath(view: PathMatcherView, path: string, errors: ValidationErrors): RbacRule | undefined {
  if (view.rule.case !== "path") {
    errors.add(path, "invalid path matcher (no path)");
    return undefined;
  }
  const matcher = parseStringMatcher(view.rule.value, `${path}.path`, errors);
  return matcher === undefined ? undefined : Object.freeze({ type: "url_path", path: matcher });
}

function freezeRules(rules: RbacRule[]): readonly RbacRule[] {
  return keptList(rules);
}

function parsePermission(view: PermissionView, path: string, errors: ValidationErrors): RbacRule | undefined {
  const rule = view.rule;
  switch (rule.case) {
    case "andRules":
    case "orRules": {
      const setPath = `${path}.${rule.case === "andRules" ? "and_rules" : "or_rules"}.rules`;
      const rules: RbacRule[] = [];
      for (let i = 0; i < rule.value.rules.length; i++) {
        const inner = parsePermission(rule.value.rules[i]!, `${setPath}[${i}]`, errors);
        if (inner !== undefined) rules.push(inner);
      }
      return Object.freeze({ type: rule.case === "andRules" ? "and" : "or", rules: freezeRules(rules) });
    }
    case "any":
      return ANY;
    case "header":
      return parseHeader(rule.value, `${path}.header`, errors);
    case "urlPath":
      return parseUrlPath(rule.value, `${path}.url_path`, errors);
    case "destinationIp": {
      const range = parseCidr(rule.value, `${path}.destination_ip`, errors);
      return range === undefined ? undefined : Object.freeze({ type: "destination_ip", range });
    }
    case "destinationPort":
      return Object.freeze({ type: "destination_port", start: rule.value, end: rule.value + 1 });
    case "destinationPortRange":
      return Object.freeze({ type: "destination_port", start: rule.value.start, end: rule.value.end });
    case "metadata":
      return Object.freeze({ type: "metadata", invert: rule.value.invert });
    case "notRule": {
      const inner = parsePermission(rule.value, `${path}.not_rule`, errors);
      return inner === undefined ? undefined : Object.freeze({ type: "not", rule: inner });
    }
    case "requestedServerName": {
      const matcher = parseStringMatcher(rule.value, `${path}.requested_server_name`, errors);
      if (matcher === undefined) return undefined;
      return Object.freeze({ type: "requested_server_name", matches: compileStringMatcher(matcher)("") });
    }
    case "matcher":
    case "uriTemplate":
      errors.add(`${path}.${rule.case === "matcher" ? "matcher" : "uri_template"}`, "not supported");
      return undefined;
    default:
      errors.add(path, "invalid permission (no rule set)");
      return undefined;
  }
}

function parsePrincipal(view: PrincipalView, path: string, errors: ValidationErrors): RbacRule | undefined {
  const id = view.identifier;
  switch (id.case) {
    case "andIds":
    case "orIds": {
      const setPath = `${path}.${id.case === "andIds" ? "and_ids" : "or_ids"}.ids`;
      const rules: RbacRule[] = [];
      for (let i = 0; i < id.value.ids.length; i++) {
        const inner = parsePrincipal(id.value.ids[i]!, `${setPath}[${i}]`, errors);
        if (inner !== undefined) rules.push(inner);
      }
      return Object.freeze({ type: id.case === "andIds" ? "and" : "or", rules: freezeRules(rules) });
    }
    case "any":
      return ANY;
    case "authenticated": {
      const name = id.value.principalName;
      if (name === undefined) return AUTHENTICATED;
      const principalName = parseStringMatcher(name, `${path}.authenticated.principal_name`, errors);
      return principalName === undefined ? undefined : Object.freeze({ type: "authenticated", principalName });
    }
    case "sourceIp":
    case "directRemoteIp":
    case "remoteIp": {
      const field =
        id.case === "sourceIp" ? "source_ip" : id.case === "directRemoteIp" ? "direct_remote_ip" : "remote_ip";
      const range = parseCidr(id.value, `${path}.${field}`, errors);
      return range === undefined ? undefined : Object.freeze({ type: "source_ip", range });
    }
    case "header":
      return parseHeader(id.value, `${path}.header`, errors);
    case "urlPath":
      return parseUrlPath(id.value, `${path}.url_path`, errors);
    case "metadata":
      return Object.freeze({ type: "metadata", invert: id.value.invert });
    case "filterState":
      errors.add(`${path}.filter_state`, "not supported");
      return undefined;
    case "notId": {
      const inner = parsePrincipal(id.value, `${path}.not_id`, errors);
      return inner === undefined ? undefined : Object.freeze({ type: "not", rule: inner });
    }
    default:
      errors.add(path, "invalid principal (no identifier set)");
      return undefined;
  }
}

const ANY: RbacRule = Object.freeze({ type: "any" });
const AUTHENTICATED: RbacRule = Object.freeze({ type: "authenticated" });

function parsePolicy(name: string, view: PolicyView, path: string, errors: ValidationErrors): RbacPolicy {
  if (view.condition !== undefined) errors.add(`${path}.condition`, "CEL conditions are not supported (A41)");
  if (view.checkedCondition !== undefined) {
    errors.add(`${path}.checked_condition`, "CEL conditions are not supported (A41)");
  }
  const permissions: RbacRule[] = [];
  for (let i = 0; i < view.permissions.length; i++) {
    const rule = parsePermission(view.permissions[i]!, `${path}.permissions[${i}]`, errors);
    if (rule !== undefined) permissions.push(rule);
  }
  const principals: RbacRule[] = [];
  for (let i = 0; i < view.principals.length; i++) {
    const rule = parsePrincipal(view.principals[i]!, `${path}.principals[${i}]`, errors);
    if (rule !== undefined) principals.push(rule);
  }
  return Object.freeze({ name, permissions: freezeRules(permissions), principals: freezeRules(principals) });
}

/** `envoy.config.rbac.v3.RBAC`; `path` names it (`...rules`). */
function parseRules(view: RbacRulesView, path: string, errors: ValidationErrors): RbacRules | undefined {
  const action = ACTIONS[view.action];
  if (action === undefined) {
    errors.add(`${path}.action`, `unknown action ${view.action}`);
    return undefined;
  }
  if (action === "LOG") {
    errors.add(`${path}.action`, "LOG is not supported (docs/decisions.md#rbac-log-action)");
    return undefined;
  }
  const audit = view.auditLoggingOptions;
  if (audit !== undefined) {
    for (let i = 0; i < audit.loggerConfigs.length; i++) {
      const logger = audit.loggerConfigs[i]!;
      if (!logger.isOptional) {
        const name = logger.auditLogger?.name ?? "";
        errors.add(
          `${path}.audit_logging_options.logger_configs[${i}].audit_logger`,
          `unsupported audit logger "${name}" (no audit logger is built in; mark it is_optional to skip it)`,
        );
      }
    }
  }
  const names = Object.keys(view.policies).sort();
  const policies = names.map((name) => parsePolicy(name, view.policies[name]!, `${path}.policies[${name}]`, errors));
  return Object.freeze({ action, policies: Object.freeze(policies) });
}

/** The filter's own message; `path` names it. */
function parseRbacFilter(view: RbacFilterView, path: string, errors: ValidationErrors): RbacFilterConfig | undefined {
  if (view.matcher !== undefined) {
    errors.add(`${path}.matcher`, "the matcher form of RBAC is not supported (use rules)");
    return undefined;
  }
  if (view.rules === undefined) return NO_RULES;
  const before = errors.count;
  const rules = parseRules(view.rules, `${path}.rules`, errors);
  if (rules === undefined || errors.count !== before) return undefined;
  return Object.freeze({ rules });
}

/** A Listener's RBAC filter config (`typed_config` of an HttpFilter). */
export function parseRbacConfig(extension: XdsExtension, errors: ValidationErrors): RbacFilterConfig | undefined {
  const view = decodeExtension(extension, RBACViewReader);
  if (view === undefined) {
    errors.add(extension.path, "could not parse RBAC filter config");
    return undefined;
  }
  return parseRbacFilter(view, extension.path, errors);
}

/** An `RBACPerRoute` override: without `rbac`, the filter lets every call of the route through. */
export function parseRbacOverride(extension: XdsExtension, errors: ValidationErrors): RbacFilterConfig | undefined {
  const view = decodeExtension(extension, RBACPerRouteViewReader);
  if (view === undefined) {
    errors.add(extension.path, "could not parse RBACPerRoute config");
    return undefined;
  }
  if (view.rbac === undefined) return NO_RULES;
  return parseRbacFilter(view.rbac, `${extension.path}.rbac`, errors);
}
