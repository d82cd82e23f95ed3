// Knobs for sibling packages (`@xdskit/xds-relay`): the stream layer served from another resource source. Outside
// semver: may change in any release.

export type { ChangedVariants } from "./held/change-scope.js";
export { WHOLE_NAME } from "./held/change-scope.js";
export { InvalidRequestError } from "./limits.js";
export { loggerFromEnvironment } from "./log-environment.js";
export { createManagementServerWithSource } from "./management-server.js";
export { ChangeLog } from "./resources/change-log.js";
export { contentVersion } from "./resources/content-version.js";
export type { Entry, ErrorEntry, ResourceEntry, VariantRef } from "./resources/entry.js";
export { entryLabel } from "./resources/entry.js";
export type { Choice, ResourceSource, ServedGroup, ServedResources, SourceStream } from "./resources/served.js";
export { UNANSWERED } from "./resources/served.js";
export { checkSameNode } from "./security/node-binding.js";
export type { Slot, TypeSubscription } from "./streams/subscription.js";
