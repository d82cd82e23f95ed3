import { canonicalize, canonicalText } from "./canonical.js";
import { compile, type Matcher } from "./compile.js";
import { compareStrings, type Expr } from "./expr.js";
import type { Params } from "./params.js";
import { comparePreference, positiveKeys } from "./specificity.js";

/** One variant of a resource: its payload and the constraints that identify it. */
export interface Variant<T> {
  readonly value: T;
  /** The constraints as given to `add`. */
  readonly constraints: Expr;
  /** The variant's identity: two constraint sets with the same canonical text are the same variant. */
  readonly canonicalText: string;
  readonly specificity: number;
}

/** The preferred match, and every other variant that matched too (empty when the match was unambiguous). */
export interface Selection<V> {
  readonly variant: V;
  /** The other matching variants, in preference order. Non-empty means TP2's "undefined" case happened. */
  readonly ambiguous: readonly V[];
}

export interface VariantIndexStats {
  readonly variants: number;
  /** Variants found by hash lookup: `TRUE`, one `key=value`, or an `and` of them over distinct keys. */
  readonly indexed: number;
  /** Variants of any other shape, evaluated one by one on each select. */
  readonly scanned: number;
  /** Distinct key sets among indexed variants: one hash lookup each per select. */
  readonly keySets: number;
}

/** The variants of one resource name, selected by a subscriber's parameters. */
export interface VariantIndex<T> {
  readonly size: number;
  /** Adds a variant, replacing the one with the same canonical constraints (constraints are identity). */
  add(constraints: Expr, value: T): Variant<T>;
  /** Removes the variant with these (canonically equal) constraints; false when there is none. */
  remove(constraints: Expr): boolean;
  get(constraints: Expr): Variant<T> | undefined;
  /** Every variant, in preference order. */
  variants(): Variant<T>[];
  /** The most specific matching variant (ties: smallest canonical text), with the others that matched. */
  select(params: Params): Selection<Variant<T>> | undefined;
  /** Every matching variant, in preference order (glob collections use them all). */
  selectAll(params: Params): Variant<T>[];
  stats(): VariantIndexStats;
}

interface Entry<T> {
  readonly variant: Variant<T>;
  /** Set for scanned variants only. */
  readonly matcher?: Matcher;
  /** Set for indexed variants only: the group's signature (arity-prefixed key tuple) and the variant's slot. */
  readonly signature?: string;
  readonly slot?: string;
}

interface Group<T> {
  /** Sorted, distinct. */
  readonly keys: readonly string[];
  readonly table: Map<string, Entry<T>>;
}

/**
 * Creates an empty index. Exact-value variants are grouped by the set of keys they constrain; each group is a
 * hash table from the tuple of values to the variant, so a select costs one lookup per distinct key set plus one
 * evaluation per variant of another shape, whatever the number of exact-value variants.
 */
export function createVariantIndex<T>(): VariantIndex<T> {
  const byText = new Map<string, Entry<T>>();
  const groups = new Map<string, Group<T>>();
  const scanned = new Map<string, Entry<T>>();

  const removeEntry = (entry: Entry<T>): void => {
    const text = entry.variant.canonicalText;
    byText.delete(text);
    scanned.delete(text);
    if (entry.signature === undefined) return;
    const group = groups.get(entry.signature)!;
    group.table.delete(entry.slot!);
    if (group.table.size === 0) groups.delete(entry.signature);
  };

  const collect = (params: Params): Variant<T>[] => {
    const found: Variant<T>[] = [];
    const get = params instanceof Map ? getFromMap : getFromRecord;
    for (const group of groups.values()) {
      const slot = slotOfParams(group.keys, params, get);
      if (slot === undefined) continue;
      const entry = group.table.get(slot);
      if (entry !== undefined) found.push(entry.variant);
    }
    for (const entry of scanned.values()) if (entry.matcher!(params)) found.push(entry.variant);
    if (found.length > 1) found.sort(comparePreference);
    return found;
  };

  return {
    get size() {
      return byText.size;
    },
    add(constraints, value) {
      const canonical = canonicalize(constraints);
      const text = canonicalText(canonical);
      const variant: Variant<T> = Object.freeze({
        value,
        constraints,
        canonicalText: text,
        specificity: positiveKeys(canonical),
      });
      const previous = byText.get(text);
      if (previous !== undefined) removeEntry(previous);
      const exact = exactValues(canonical);
      let entry: Entry<T>;
      if (exact === undefined) {
        entry = { variant, matcher: compile(canonical) };
        scanned.set(text, entry);
      } else {
        const keys = [...exact.keys()].sort(compareStrings);
        const signature = `${keys.length}|${encodeTuple(keys)}`;
        const slot = encodeTuple(keys.map((k) => exact.get(k)!));
        entry = { variant, signature, slot };
        let group = groups.get(signature);
        if (group === undefined) {
          group = { keys, table: new Map() };
          groups.set(signature, group);
        }
        group.table.set(slot, entry);
      }
      byText.set(text, entry);
      return variant;
    },
    remove(constraints) {
      const entry = byText.get(canonicalText(constraints));
      if (entry === undefined) return false;
      removeEntry(entry);
      return true;
    },
    get(constraints) {
      return byText.get(canonicalText(constraints))?.variant;
    },
    variants() {
      return [...byText.values()].map((e) => e.variant).sort(comparePreference);
    },
    select(params) {
      const found = collect(params);
      if (found.length === 0) return undefined;
      return { variant: found[0]!, ambiguous: found.slice(1) };
    },
    selectAll: collect,
    stats() {
      let indexed = 0;
      for (const g of groups.values()) indexed += g.table.size;
      return { variants: byText.size, indexed, scanned: scanned.size, keySets: groups.size };
    },
  };
}

/**
 * The key → value map of an exact-value expression (in canonical form): `TRUE` (no keys), `k=v`, or an `and` of
 * `k=v` over distinct keys. Undefined for every other shape, including `k=a && k=b`, which never matches.
 */
export function exactValues(canonical: Expr): Map<string, string> | undefined {
  if (canonical.kind === "true") return new Map();
  if (canonical.kind === "value") return new Map([[canonical.key, canonical.value]]);
  if (canonical.kind !== "and") return undefined;
  const out = new Map<string, string>();
  for (const c of canonical.children) {
    if (c.kind !== "value" || out.has(c.key)) return undefined;
    out.set(c.key, c.value);
  }
  return out;
}

type Get = (params: Params, key: string) => string | undefined;
// Both agree with `lookup`, chosen once per select instead of once per key.
const getFromMap: Get = (params, key) => {
  const v = (params as ReadonlyMap<string, unknown>).get(key);
  return typeof v === "string" ? v : undefined;
};
const getFromRecord: Get = (params, key) => {
  const r = params as Readonly<Record<string, unknown>>;
  const v = r[key];
  return typeof v === "string" && Object.hasOwn(r, key) ? v : undefined;
};

/** The slot the parameters select in a group with these keys (same encoding as `encodeTuple`). */
function slotOfParams(keys: readonly string[], params: Params, get: Get): string | undefined {
  if (keys.length === 1) return get(params, keys[0]!);
  let out = "";
  for (const k of keys) {
    const v = get(params, k);
    if (v === undefined) return undefined;
    out += `${v.length}:${v}`;
  }
  return out;
}

/** An injective encoding of a string tuple (length-prefixed), the identity on 1-tuples. */
function encodeTuple(parts: readonly string[]): string {
  if (parts.length === 1) return parts[0]!;
  let out = "";
  for (const p of parts) out += `${p.length}:${p}`;
  return out;
}
