// Golden rows for the first TP2 draft (client-sent `key_constraints`, resources carrying parameters; see
// docs/decisions.md#wire-format-for-dynamic-parameters).
import type { DraftConstraints } from "../src/index.js";

export interface DraftMatchRow {
  readonly spec: string;
  readonly constraints: DraftConstraints;
  readonly parameters: Readonly<Record<string, string>>;
  readonly expected: boolean;
}

/** `expected`: names of the matching variants in preference order (first = selected, rest = ambiguous). */
export interface DraftSelectRow {
  readonly spec: string;
  readonly constraints: DraftConstraints;
  readonly variants: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly expected: readonly string[];
}

/** `{ env: "prod" }` → `{ env: { constraints: [{ value: "prod" }] } }`. */
export function exact(values: Readonly<Record<string, string>>): DraftConstraints {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { constraints: [{ value: v }] }]));
}

/** A single-key range constraint, written as in the seed: `{integer_range_list:[{range:{min_value max_value}}]}`. */
export function ranges(key: string, ...rs: [number, number][]): DraftConstraints {
  const list = rs.map(([min_value, max_value]) => ({ range: { min_value, max_value } }));
  return { [key]: { constraints: [{ integer_range_list: list }] } };
}

const ABSENT_MATCHES =
  "seed API: if a key has a constraint here but is not present on the resource, it will match, regardless of what the constraint says";
const ABSENT_TRANSITION =
  "seed: allowing the set of constraints for a given key to match any resource variant that does not specify that key at all";
const MIGRATION =
  'seed: if the node metadata contains the entry `env=prod`, this would be translated to a constraint {key_constraints:[{key:"env" value:{constraints:[{value:"prod"}]}}]}';
const INVERT = "seed Dynamic Route Selection: `invert:true` ... {env=NOT_prod}";
const SHARD =
  "seed: a cache contains a variant of a resource with the parameter `{shard=3}` and a client subscribes with ... min_value:0 max_value:5";
const INTEGERS = "seed API: The key's value must be integers and within one of the ranges in this list.";

export const DRAFT_MATCH_ROWS: readonly DraftMatchRow[] = [
  { spec: MIGRATION, constraints: exact({ env: "prod" }), parameters: { env: "prod" }, expected: true },
  { spec: MIGRATION, constraints: exact({ env: "prod" }), parameters: { env: "test" }, expected: false },
  {
    spec: ABSENT_TRANSITION,
    constraints: exact({ env: "prod", version: "v1" }),
    parameters: { env: "prod" },
    expected: true,
  },
  {
    spec: ABSENT_TRANSITION,
    constraints: exact({ env: "prod", version: "v1" }),
    parameters: { env: "test" },
    expected: false,
  },
  { spec: ABSENT_MATCHES, constraints: ranges("shard", [0, 5]), parameters: {}, expected: true },
  { spec: ABSENT_MATCHES, constraints: ranges("shard", [0, 5]), parameters: { other: "9" }, expected: true },
  { spec: SHARD, constraints: ranges("shard", [0, 5]), parameters: { shard: "3" }, expected: true },
  { spec: SHARD, constraints: ranges("shard", [0, 5]), parameters: { shard: "5" }, expected: true },
  { spec: SHARD, constraints: ranges("shard", [0, 5]), parameters: { shard: "6" }, expected: false },
  { spec: INTEGERS, constraints: ranges("shard", [0, 5]), parameters: { shard: "three" }, expected: false },
  { spec: INTEGERS, constraints: ranges("shard", [0, 5]), parameters: { shard: "03" }, expected: false },
  { spec: INTEGERS, constraints: ranges("shard", [0, 5]), parameters: { shard: "-1" }, expected: false },
  {
    spec: "seed API: A list of one or more constraints on the value of the key. All constraints must be met.",
    constraints: { s: { constraints: [{ integer_range_list: [{ min_value: 0, max_value: 9 }] }, { value: "7" }] } },
    parameters: { s: "8" },
    expected: false,
  },
  {
    spec: "seed API: A value is considered to match if it falls in any of the ranges.",
    constraints: ranges("shards", [4, 6], [11, 15], [46, 90]),
    parameters: { shards: "12" },
    expected: true,
  },
  {
    spec: INVERT,
    constraints: { env: { constraints: [{ value: "prod" }], invert: true } },
    parameters: { env: "NOT_prod" },
    expected: true,
  },
  {
    spec: INVERT,
    constraints: { env: { constraints: [{ value: "prod" }], invert: true } },
    parameters: { env: "prod" },
    expected: false,
  },
  {
    spec: `${INVERT}; ${ABSENT_MATCHES}`,
    constraints: { env: { constraints: [{ value: "prod" }], invert: true } },
    parameters: {},
    expected: true,
  },
  { spec: "seed: an empty set of constraints", constraints: {}, parameters: { env: "prod" }, expected: true },
];

const PROD_TEST = { prod: { env: "prod" }, test: { env: "test" } };
const FOUR = {
  "prod-v1": { env: "prod", version: "v1" },
  "prod-v2": { env: "prod", version: "v2" },
  "test-v1": { env: "test", version: "v1" },
  "test-v2": { env: "test", version: "v2" },
};
const PATCHES = Object.fromEntries([0, 1, 2, 3, 4, 5].map((n) => [`patch${n}`, { "xds.version.patch": `${n}` }]));
const SHARDS = Object.fromEntries(
  [4, 5, 6, 7, 10, 11, 15, 16, 45, 46, 90, 91].map((n) => [`s${n}`, { shards: `${n}` }]),
);

export const DRAFT_SELECT_ROWS: readonly DraftSelectRow[] = [
  {
    spec: "seed transition: the resource variants ... {env=prod} {env=test}; clients send ... For {env=prod}",
    constraints: exact({ env: "prod" }),
    variants: PROD_TEST,
    expected: ["prod"],
  },
  {
    spec: "seed: If the new key is added on the clients first ... existing sets of dynamic parameters, which do not specify the `version` key at all",
    constraints: exact({ env: "prod", version: "v1" }),
    variants: PROD_TEST,
    expected: ["prod"],
  },
  {
    spec: "seed: if the new key is added on the server side first ... which of the first two sets of constraints to use",
    constraints: exact({ env: "prod" }),
    variants: FOUR,
    expected: ["prod-v1", "prod-v2"],
  },
  {
    spec: "seed: {env=prod} and {env=prod, version=v1} ... These constraints can match either of the above variants of the resource.",
    constraints: exact({ env: "prod", version: "v1" }),
    variants: { prod: { env: "prod" }, "prod-v1": { env: "prod", version: "v1" } },
    expected: ["prod-v1", "prod"],
  },
  {
    spec: "seed: if a server adds multiple variants of a new key that clients are not yet sending ... the cache implementation is free to pick one of the variants at random",
    constraints: exact({ env: "prod" }),
    variants: { "prod-v1": FOUR["prod-v1"], "prod-v2": FOUR["prod-v2"] },
    expected: ["prod-v1", "prod-v2"],
  },
  { spec: SHARD, constraints: ranges("shard", [0, 5]), variants: { shard3: { shard: "3" } }, expected: ["shard3"] },
  {
    spec: "seed: the largest possible matching value is preferred ... the preferred value is `{shard=5}`, not `{shard=3}`",
    constraints: ranges("shard", [0, 5]),
    variants: { shard3: { shard: "3" }, shard5: { shard: "5" }, shard6: { shard: "6" } },
    expected: ["shard5", "shard3"],
  },
  {
    spec: "seed minor version example as written: variants carry `xds.version.patch`, the constraint names `xds.version.minor`, so by the absent-key rule all six match",
    constraints: ranges("xds.version.minor", [0, 5]),
    variants: PATCHES,
    expected: ["patch0", "patch1", "patch2", "patch3", "patch4", "patch5"],
  },
  {
    spec: 'seed minor version example, one key: For clients at version 3.0.4 or lower ... {"xds.version.patch"=4}',
    constraints: ranges("xds.version.patch", [0, 4]),
    variants: PATCHES,
    expected: ["patch4", "patch3", "patch2", "patch1", "patch0"],
  },
  {
    spec: 'seed minor version example, one key: For clients at version 3.0.5 or higher, a resource with keys {"xds.version.patch"=5}',
    constraints: ranges("xds.version.patch", [0, 5]),
    variants: PATCHES,
    expected: ["patch5", "patch4", "patch3", "patch2", "patch1", "patch0"],
  },
  {
    spec: "seed Sharding Clusters, CDS (glob collection): shard ranges [4-6], [11-15], and [46-90]; all matching variants of the resource will be used",
    constraints: ranges("shards", [4, 6], [11, 15], [46, 90]),
    variants: SHARDS,
    expected: ["s90", "s46", "s15", "s11", "s6", "s5", "s4"],
  },
  {
    spec: 'seed Sharding Clusters, SRDS (single resource): {value:"[4-6],[11-15],[46-90]"}',
    constraints: exact({ shards: "[4-6],[11-15],[46-90]" }),
    variants: { all: { shards: "[4-6],[11-15],[46-90]" }, first: { shards: "[4-6]" } },
    expected: ["all"],
  },
  {
    spec: 'seed Sharding Endpoints: constraints:[{value:"123"}] ... another client might be told to use 456',
    constraints: exact({ subset_id: "123" }),
    variants: { s123: { subset_id: "123" }, s456: { subset_id: "456" } },
    expected: ["s123"],
  },
  {
    spec: 'seed Selecting Cluster Based on ACL: constraints:[{value:"true"}] // or "false"',
    constraints: exact({ use_proxy: "false" }),
    variants: { direct: { use_proxy: "false" }, proxy: { use_proxy: "true" } },
    expected: ["direct"],
  },
];

/** The seed's first Dynamic Route Selection table: 9 variants, 4 distinct contents. */
export const ROUTE_CONTENTS = (env: string, version: string) =>
  `${env === "prod" ? "with" : "without"} env=prod route, ${version === "v1" ? "with" : "without"} version=v1 route`;
export const ENVS = ["prod", "canary", "test"] as const;
export const VERSIONS = ["v1", "v2", "v3"] as const;

/** The seed's second table: DPDS constraints (with `invert`) and the parameters of the 4 variants. */
export const INVERT_TABLE = [
  { prod: false, v1: false, parameters: { env: "NOT_prod", version: "NOT_v1" } },
  { prod: true, v1: false, parameters: { env: "prod", version: "NOT_v1" } },
  { prod: false, v1: true, parameters: { env: "NOT_prod", version: "v1" } },
  { prod: true, v1: true, parameters: { env: "prod", version: "v1" } },
].map((row) => ({
  ...row,
  constraints: {
    env: { constraints: [{ value: "prod" }], invert: !row.prod },
    version: { constraints: [{ value: "v1" }], invert: !row.v1 },
  } satisfies DraftConstraints,
  contents: ROUTE_CONTENTS(row.prod ? "prod" : "x", row.v1 ? "v1" : "x"),
}));
