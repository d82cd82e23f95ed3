// Shared by the property tests of plans (src/held/*.test.ts): the constraints and parameter maps they draw from, and a
// diff as sets, so two diffs that list the same things in another order compare equal.

import type { HeldDiff } from "../src/held/held-diff.js";
import type { Entry } from "../src/resources/entry.js";

/** Variants of every shape the plans treat apart: exact values, nested, absent keys, `||`. */
export const CONSTRAINT_TEXTS = [
  "true",
  "env=prod",
  "env=test",
  "env=prod && v=1",
  "!exists(env)",
  "exists(v)",
  "env=test || v=2",
  "v=1 && !exists(env)",
];
export const PARAMETER_MAPS: readonly Readonly<Record<string, string>>[] = [
  {},
  { env: "prod" },
  { env: "test" },
  { env: "prod", v: "1" },
  { v: "2" },
  { v: "1" },
];

const label = (entry: Entry) => `${entry.name}{${entry.variant?.text ?? ""}}@${entry.version}`;

export const asSets = (diff: HeldDiff) => ({
  changed: new Set(diff.changed.keys.map((key, i) => `${key}->${label(diff.changed.entries[i] as Entry)}`)),
  errors: new Set(diff.errors.keys.map((key, i) => `${key}->${label(diff.errors.entries[i] as Entry)}`)),
  removed: new Set(diff.removed.map((r) => `${r.name}{${r.variant?.text ?? ""}}`)),
  notFound: new Set(diff.notFound),
  forgotten: new Set(diff.forgotten),
});

const NONE = { keys: [], entries: [] };
export const NOTHING = asSets({ changed: NONE, errors: NONE, removed: [], notFound: [], forgotten: [] });
