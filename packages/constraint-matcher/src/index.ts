// @xdskit/constraint-matcher: TP2 dynamic parameter constraints in one representation, read from the merged
// envoy API, the TP2 draft and a text syntax; evaluated, compiled, indexed and checked. Platform-free: no I/O.
// Grouped by audience (import sorting is off for this file): end users first.

// Reading and writing constraints.
export { fromProto, toProto, MAX_PROTO_DEPTH, type FromProtoOptions } from "./proto.js";
export { fromText } from "./text-parse.js";
export { toText } from "./text-print.js";
export {
  fromDraft,
  type DraftConstraint,
  type DraftConstraints,
  type DraftKeyConstraints,
  type DraftRange,
  type DraftUint,
} from "./draft.js";
export { canonicalize, canonicalText } from "./canonical.js";
export { ConstraintError, type ConstraintErrorLocation } from "./constraint-error.js";

// Matching and selecting variants.
export { matches } from "./evaluate.js";
export { compile, type Matcher } from "./compile.js";
export type { Params } from "./params.js";
export {
  createVariantIndex,
  type Selection,
  type Variant,
  type VariantIndex,
  type VariantIndexStats,
} from "./variant-index.js";
export { selectDraftVariant, selectAllDraftVariants, parametersText, type DraftVariant } from "./draft-select.js";

// Checks for servers, and DPDS.
export { findOverlaps, checkBestPractices, type BestPracticeWarning, type Overlap } from "./overlaps.js";
export { deriveParameters } from "./derive.js";

// Building expressions.
export {
  and,
  or,
  not,
  value,
  exists,
  range,
  TRUE,
  FALSE,
  MAX_UINT64,
  equals,
  keysOf,
  type Expr,
} from "./expr.js";

// For people extending the library: the expression nodes and the building blocks the functions above use.
export type {
  AndExpr,
  ExistsExpr,
  IntRange,
  LiteralExpr,
  NotExpr,
  OrExpr,
  RangeExpr,
  TrueExpr,
  ValueExpr,
} from "./expr.js";
export { comparePreference, specificity, type Ranked } from "./specificity.js";
export { findWitness, isSatisfiable } from "./satisfy.js";
