// @xdskit/dpds-wrapper: DPDS layered over any @xdskit/xds-client XdsClient, with the same interface.
// Grouped by audience (import sorting is off for this file): end users first.
export { DEFAULT_DPDS_RESOURCE_NAME, DEFAULT_DPDS_WAIT_MS, withDynamicParameters } from "./with-dynamic-parameters.js";
export type { DynamicParametersOptions } from "./with-dynamic-parameters.js";

// The DPDS resource type, for watching it directly or serving it.
export { DPDS_TYPE_URL, dpdsResourceType } from "./dpds-resource-type.js";
export type { DynamicParametersUpdate } from "./dpds-resource-type.js";
