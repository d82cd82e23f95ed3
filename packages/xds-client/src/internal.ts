// Knobs for tests and sibling packages. Outside semver: may change in any release.
export type { Backoff, BackoffOptions, Clock } from "./clock.js";
export { createBackoff, systemClock } from "./clock.js";
export { resolveFeatures } from "./features.js";
export { OLD_STYLE_AUTHORITY, parseResourceName } from "./resource-name.js";
export type { XdsClientInternals } from "./xds-client.js";
export { createXdsClientWithInternals } from "./xds-client.js";
export { errorMessage } from "./xds-error.js";
export type { Re2Regex, Re2Rewrite } from "./resources/regex.js";
export { compileRegex, compileRewrite, MAX_PROGRAM_SIZE, RegexError } from "./resources/regex.js";
export type { StringMatch } from "./resources/string-match.js";
export { compileStringMatch } from "./resources/string-match.js";
