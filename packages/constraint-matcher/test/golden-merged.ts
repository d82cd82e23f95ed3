// Golden rows for the merged envoy API semantics (TP2's current matching rules, and docs/decisions.md).
// Constraints are written in the text syntax; the runner also checks each row through the proto form.

export interface MatchRow {
  readonly spec: string;
  readonly constraints: string;
  readonly params: Readonly<Record<string, string>>;
  readonly expected: boolean;
}

/** `expected`: the matching variants in preference order (first = selected, rest = reported as ambiguous). */
export interface SelectRow {
  readonly spec: string;
  readonly variants: readonly string[];
  readonly params: Readonly<Record<string, string>>;
  readonly expected: readonly string[];
}

export interface CheckRow {
  readonly spec: string;
  readonly variants: readonly string[];
  readonly overlaps: readonly (readonly [string, string])[];
  readonly warnings: readonly string[];
}

export interface DeriveRow {
  readonly spec: string;
  readonly constraints: string;
  readonly expected: Readonly<Record<string, string>> | { readonly error: string };
}

const VALUE = "§2.2: `constraint{key,value}` is true iff the client's map holds `key` with exactly `value`";
const MISSING = "§2.2: If the key is missing, it is false.";
const OLD_CLIENTS = "§2.2: older clients that do not send `version` do not match a variant that requires `version=v1`";
const EXISTS = "§2.3: `constraint{key,exists{}}` is true iff `key` is present with any value";
const AND = "§2.4: `and_constraints` means all must hold";
const OR = "§2.4: `or_constraints` means any one holds";
const NOT = "§2.4: `not_constraints` negates its child";
const NOT_EXISTS = "§2.4: `not(exists(k))` therefore matches clients that do not send `k`";
const UNCONSTRAINED = "§2.5: client keys that the constraints never mention do not block a match";
const NO_CONSTRAINTS = "§2.5: A variant with no constraints matches every client.";
const ISSUE = "issue 3: `env=prod && (version=v1 || !exists(canary))`";

export const MATCH_ROWS: readonly MatchRow[] = [
  { spec: VALUE, constraints: "env=prod", params: { env: "prod" }, expected: true },
  { spec: VALUE, constraints: "env=prod", params: { env: "test" }, expected: false },
  { spec: VALUE, constraints: "env=prod", params: { env: "Prod" }, expected: false },
  { spec: VALUE, constraints: "env=prod", params: { env: "prod " }, expected: false },
  { spec: VALUE, constraints: 'env=""', params: { env: "" }, expected: true },
  { spec: MISSING, constraints: "env=prod", params: {}, expected: false },
  { spec: MISSING, constraints: "env=prod", params: { ENV: "prod" }, expected: false },
  { spec: OLD_CLIENTS, constraints: "env=prod && version=v1", params: { env: "prod" }, expected: false },
  { spec: OLD_CLIENTS, constraints: "env=prod && version=v1", params: { env: "prod", version: "v1" }, expected: true },
  { spec: EXISTS, constraints: "exists(canary)", params: { canary: "" }, expected: true },
  { spec: EXISTS, constraints: "exists(canary)", params: { canary: "yes" }, expected: true },
  { spec: EXISTS, constraints: "exists(canary)", params: { env: "prod" }, expected: false },
  { spec: AND, constraints: "a=1 && b=2 && c=3", params: { a: "1", b: "2", c: "3" }, expected: true },
  { spec: AND, constraints: "a=1 && b=2 && c=3", params: { a: "1", b: "2", c: "4" }, expected: false },
  { spec: OR, constraints: "a=1 || b=2 || c=3", params: { c: "3" }, expected: true },
  { spec: OR, constraints: "a=1 || b=2 || c=3", params: { a: "2", b: "1" }, expected: false },
  { spec: NOT, constraints: "!a=1", params: { a: "2" }, expected: true },
  { spec: NOT, constraints: "!a=1", params: { a: "1" }, expected: false },
  { spec: NOT, constraints: "!a=1", params: {}, expected: true },
  { spec: NOT, constraints: "!(a=1 || b=2)", params: { b: "2" }, expected: false },
  { spec: NOT_EXISTS, constraints: "!exists(version)", params: { env: "prod" }, expected: true },
  { spec: NOT_EXISTS, constraints: "!exists(version)", params: { version: "v1" }, expected: false },
  { spec: NOT_EXISTS, constraints: "!exists(version)", params: { version: "" }, expected: false },
  { spec: UNCONSTRAINED, constraints: "env=prod", params: { env: "prod", zone: "z1", new_key: "x" }, expected: true },
  { spec: UNCONSTRAINED, constraints: "!exists(canary)", params: { env: "prod", zone: "z1" }, expected: true },
  { spec: NO_CONSTRAINTS, constraints: "true", params: {}, expected: true },
  { spec: NO_CONSTRAINTS, constraints: "true", params: { env: "prod", version: "v9" }, expected: true },
  { spec: ISSUE, constraints: "env=prod && (version=v1 || !exists(canary))", params: { env: "prod" }, expected: true },
  {
    spec: ISSUE,
    constraints: "env=prod && (version=v1 || !exists(canary))",
    params: { env: "prod", canary: "1" },
    expected: false,
  },
  {
    spec: ISSUE,
    constraints: "env=prod && (version=v1 || !exists(canary))",
    params: { env: "prod", canary: "1", version: "v1" },
    expected: true,
  },
];

const MOST_SPECIFIC =
  "docs/decisions.md#ambiguous-variants: pick the one whose constraints are most specific (most keys constrained by positive `value`/`exists` terms)";
const TIES = "docs/decisions.md#ambiguous-variants: break ties by the canonical text of the constraints";
const NO_VARIANT =
  "§2.6: There should be a variant for every key value that will be sent. Otherwise the server acts as if the resource does not exist.";
const DEFAULT = "§2.4: This is how a server gives a default to clients that have not yet started sending a new key.";
const PAIR = ["env=prod", "env=prod && version=v1"];

export const SELECT_ROWS: readonly SelectRow[] = [
  { spec: MOST_SPECIFIC, variants: PAIR, params: { env: "prod", version: "v1" }, expected: [PAIR[1]!, PAIR[0]!] },
  { spec: MOST_SPECIFIC, variants: PAIR, params: { env: "prod" }, expected: [PAIR[0]!] },
  { spec: MOST_SPECIFIC, variants: PAIR, params: { env: "prod", version: "v2" }, expected: [PAIR[0]!] },
  { spec: MOST_SPECIFIC, variants: ["true", "env=prod"], params: { env: "prod" }, expected: ["env=prod", "true"] },
  { spec: MOST_SPECIFIC, variants: ["true", "env=prod"], params: { env: "test" }, expected: ["true"] },
  {
    spec: MOST_SPECIFIC,
    variants: ["env=prod && !exists(canary)", "env=prod && exists(canary)"],
    params: { env: "prod", canary: "1" },
    expected: ["env=prod && exists(canary)"],
  },
  {
    spec: TIES,
    variants: ["version=v1", "env=prod"],
    params: { env: "prod", version: "v1" },
    expected: ["env=prod", "version=v1"],
  },
  {
    spec: TIES,
    // Canonical texts: "!exists(canary) && env=prod" sorts before "env=prod" ("!" < "e").
    variants: ["env=prod", "env=prod && !exists(canary)"],
    params: { env: "prod" },
    expected: ["env=prod && !exists(canary)", "env=prod"],
  },
  { spec: NO_VARIANT, variants: ["env=prod", "env=test"], params: { env: "qa" }, expected: [] },
  { spec: NO_VARIANT, variants: ["env=prod", "env=test"], params: {}, expected: [] },
  {
    spec: DEFAULT,
    variants: ["!exists(version)", "version=v1", "version=v2"],
    params: { env: "prod" },
    expected: ["!exists(version)"],
  },
  {
    spec: DEFAULT,
    variants: ["!exists(version)", "version=v1", "version=v2"],
    params: { version: "v2" },
    expected: ["version=v2"],
  },
  {
    spec: DEFAULT,
    variants: ["!exists(version)", "version=v1", "version=v2"],
    params: { version: "v3" },
    expected: [],
  },
];

export const CHECK_ROWS: readonly CheckRow[] = [
  {
    spec: "§2.6: Every variant of a resource should constrain the same set of keys.",
    variants: PAIR,
    overlaps: [[PAIR[0]!, PAIR[1]!]],
    warnings: ["different-key-sets"],
  },
  {
    spec: "§2.6: Variants should have non-overlapping constraints. Control planes must not accept resource sets that violate this.",
    variants: ["env=prod && version=v1", "env=prod && version=v2", "env=test && version=v1"],
    overlaps: [],
    warnings: [],
  },
  {
    spec: "§2.6: Variants should have non-overlapping constraints.",
    variants: ["env=prod", "version=v1", "env=test"],
    overlaps: [
      ["env=prod", "version=v1"],
      ["version=v1", "env=test"],
    ],
    warnings: ["different-key-sets"],
  },
  {
    spec: "§2.4: `not(exists(k))` ... gives a default to clients that have not yet started sending a new key.",
    variants: ["!exists(version)", "version=v1", "version=v2"],
    overlaps: [],
    warnings: [],
  },
];

const DERIVE =
  "docs/decisions.md#the-dpds-resource: a `SingleConstraint{key, value}`, alone or inside a top-level `and_constraints`, becomes `key=value`";
const NOT_PARAMS =
  "docs/decisions.md#the-dpds-resource: any other shape (`exists`, `or`, `not`, nesting) cannot be expressed as parameters";

export const DERIVE_ROWS: readonly DeriveRow[] = [
  { spec: `${DERIVE} (seed DPDS example)`, constraints: "listener_type=direct", expected: { listener_type: "direct" } },
  {
    spec: `${DERIVE} (seed DPDS update)`,
    constraints: "listener_type=via_proxy",
    expected: { listener_type: "via_proxy" },
  },
  { spec: `${DERIVE} (seed ACL example)`, constraints: "use_proxy=true", expected: { use_proxy: "true" } },
  { spec: DERIVE, constraints: "subset_id=123 && zone=a", expected: { subset_id: "123", zone: "a" } },
  { spec: `${DERIVE} (repeats agree)`, constraints: "a=1 && a=1", expected: { a: "1" } },
  { spec: "§2.5: no constraints need no parameters", constraints: "true", expected: {} },
  { spec: NOT_PARAMS, constraints: "exists(canary)", expected: { error: "constraint: exists(canary)" } },
  { spec: NOT_PARAMS, constraints: "a=1 || b=2", expected: { error: "or_constraints: a=1 || b=2" } },
  { spec: NOT_PARAMS, constraints: "!a=1", expected: { error: "not_constraints: !a=1" } },
  {
    spec: NOT_PARAMS,
    constraints: "a=1 && (b=2 && c=3)",
    expected: { error: "and_constraints.constraints[1]: b=2 && c=3" },
  },
  {
    spec: `${NOT_PARAMS} (two values for one key)`,
    constraints: "a=1 && a=2",
    expected: { error: 'and_constraints.constraints[1]: conflicting values for key "a"' },
  },
];
