// Knobs for tests and sibling packages. Outside semver: may change in any release.
export type { Backoff, BackoffOptions, Clock } from "./clock.js";
export { createBackoff, systemClock } from "./clock.js";
export { resolveFeatures } from "./features.js";
export type { LogComponent } from "./log-environment.js";
export { environmentLogLevel, GRPC_TRACERS, LOG_COMPONENTS, loggerFromEnvironment } from "./log-environment.js";
// The mesh layer's matcher compilers, for the xDS-enabled server's route matching (one regex engine for every user).
export type { StringPredicate } from "./mesh/string-match.js";
export { compileHeaderValueMatcher, compileStringMatcher } from "./mesh/string-match.js";
// The one engine of every regular expression from xDS: RE2 semantics, linear time (docs/decisions.md).
export type { Re2Regex, Re2Rewrite } from "./regex.js";
export { compileRegex, compileRewrite, MAX_PROGRAM_SIZE, RegexError } from "./regex.js";
export { OLD_STYLE_AUTHORITY, parseResourceName } from "./resource-name.js";
export type { XdsClientInternals } from "./xds-client.js";
export { createXdsClientWithInternals } from "./xds-client.js";
export { errorMessage } from "./xds-error.js";
