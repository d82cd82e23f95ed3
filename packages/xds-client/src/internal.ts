// Knobs for tests and sibling packages. Outside semver: may change in any release.

export type { XdsClientInternals } from "./client/xds-client.js";
export { createXdsClientWithInternals } from "./client/xds-client.js";
// The mesh layer's matcher compilers, for the xDS-enabled server's route matching (one regex engine for every user).
export type { StringPredicate } from "./mesh/string-match.js";
export { compileHeaderValueMatcher, compileStringMatcher } from "./mesh/string-match.js";
export type { LogComponent } from "./observability/log-environment.js";
export {
  environmentLogLevel,
  GRPC_TRACERS,
  LOG_COMPONENTS,
  loggerFromEnvironment,
} from "./observability/log-environment.js";
export type { Backoff, BackoffOptions, Clock } from "./shared/clock.js";
export { createBackoff, systemClock } from "./shared/clock.js";
export { resolveFeatures } from "./shared/features.js";
// The one engine of every regular expression from xDS: RE2 semantics, linear time (docs/decisions.md).
export type { Re2Regex, Re2Rewrite } from "./shared/regex.js";
export { compileRegex, compileRewrite, MAX_PROGRAM_SIZE, RegexError } from "./shared/regex.js";
export { OLD_STYLE_AUTHORITY, parseResourceName } from "./shared/resource-name.js";
export { errorMessage } from "./shared/xds-error.js";
