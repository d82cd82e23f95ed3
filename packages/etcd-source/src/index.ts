// @xdskit/etcd-source: control-plane replicas fed from one etcd prefix. Grouped by audience (import sorting is off
// for this file): the source and the writers first, then the key layout and the etcd client they use.

// Feeding a management server.
export { createEtcdSource } from "./source/etcd-source.js";
export type {
  EtcdSource,
  EtcdSourceChange,
  EtcdSourceOptions,
  EtcdSourceState,
  EtcdSourceStatus,
} from "./source/etcd-source.js";
export type { ApplyOutcome, EtcdSourceTarget, KeyChange, SkippedKey } from "./source/served-keys.js";

// Writing and reading resources.
export { planEtcdChange } from "./write/change-plan.js";
export type { EtcdChangePlan, EtcdResource, PlannedDelete, PlannedPut, PlanOptions } from "./write/change-plan.js";
export { applyEtcdChange, countTransactions, EtcdConflictError } from "./write/apply-change.js";
export type { ApplyOptions, ApplyResult } from "./write/apply-change.js";
export {
  DEFAULT_TRANSACTION_LIMITS,
  EtcdValueTooLargeError,
  TRANSACTION_OVERHEAD_BYTES,
} from "./write/transactions.js";
export type { TransactionLimits } from "./write/transactions.js";
export { readEtcdResources } from "./source/read-resources.js";
export type { ReadResourcesOptions, StoredResource, StoredResources } from "./source/read-resources.js";

// Connecting to etcd.
export { connectEtcd } from "./etcd/etcd-connection.js";
export type {
  EtcdConnection,
  EtcdConnectionOptions,
  EtcdTlsOptions,
  RangeResult,
  WatchStreamHandle,
} from "./etcd/etcd-connection.js";
export { EtcdError } from "./etcd/etcd-error.js";
export type { EtcdErrorKind } from "./etcd/etcd-error.js";
export { parseEndpoints } from "./etcd/endpoints.js";
export type { EtcdEndpoint } from "./etcd/endpoints.js";

// The key layout and the values.
export {
  DEFAULT_PREFIX,
  keyIdentity,
  markerKey,
  normalizePrefix,
  parseResourceKey,
  prefixRange,
  resourceKey,
} from "./keys/resource-key.js";
export type { ParsedKey, ResourceKey } from "./keys/resource-key.js";
export { decodeValue, encodeValue } from "./keys/resource-value.js";
export type { DecodedValue, ValueFormat } from "./keys/resource-value.js";
export type { Logger, LogLevel } from "./logger.js";
