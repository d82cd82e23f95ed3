// @xdskit/constraint-matcher: TP2 dynamic parameter constraints in one representation, read from the merged
// envoy API, the TP2 draft and a text syntax; evaluated, compiled, indexed and checked. Platform-free: no I/O.

export { canonicalize, canonicalText } from "./canonical.js";
export { compile, type Matcher } from "./compile.js";
export { ConstraintError, type ConstraintErrorLocation } from "./constraint-error.js";
export { deriveParameters } from "./derive.js";
export {
  type DraftConstraint,
  type DraftConstraints,
  type DraftKeyConstraints,
  type DraftRange,
  type DraftUint,
  fromDraft,
} from "./draft.js";
export { type DraftVariant, parametersText, selectAllDraftVariants, selectDraftVariant } from "./draft-select.js";
export { matches } from "./evaluate.js";
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
export {
  and,
  type Expr,
  equals,
  exists,
  FALSE,
  keysOf,
  MAX_UINT64,
  not,
  or,
  range,
  TRUE,
  value,
} from "./expr.js";
export { type BestPracticeWarning, checkBestPractices, findOverlaps, type Overlap } from "./overlaps.js";
export type { Params } from "./params.js";
export { type FromProtoOptions, fromProto, MAX_PROTO_DEPTH, toProto } from "./proto.js";
export { findWitness, isSatisfiable } from "./satisfy.js";
// For people extending the library: the building blocks the functions above use.
export { comparePreference, type Ranked, specificity } from "./specificity.js";
export { fromText } from "./text-parse.js";
export { toText } from "./text-print.js";
export {
  createVariantIndex,
  type Selection,
  type Variant,
  type VariantIndex,
  type VariantIndexStats,
} from "./variant-index.js";
