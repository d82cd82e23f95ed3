import { create } from "@bufbuild/protobuf";
import {
  canonicalize,
  canonicalText,
  createVariantIndex,
  type Expr,
  findOverlaps,
  fromProto,
  fromText,
  type Params,
  TRUE,
  toProto,
  type VariantIndex,
} from "@xdskit/constraint-matcher";
import {
  type DynamicParameterConstraints,
  type ResourceName,
  ResourceNameSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Entry, VariantRef } from "./entry.js";
import { OverlappingVariantsError } from "./overlapping-variants-error.js";

/**
 * TP2 constraints as users give them: a `@xdskit/constraint-matcher` expression, the wire message
 * (`envoy.service.discovery.v3.DynamicParameterConstraints`) or the matcher's text syntax (`env=prod && exists(v)`).
 */
export type ConstraintsInput = Expr | DynamicParameterConstraints | string;

const NO_PARAMETERS: Params = Object.freeze({});

/**
 * The canonical form of `input` (`TRUE` when undefined). Constraints that have no wire form (the TP2 draft's integer
 * ranges, a variant that can match nothing such as `!true`) or that do not parse are a TypeError naming `what`.
 * Constraints given as text are parsed once: republishing a variant with the same text (the usual way to publish a
 * new version of it) reuses the canonical form (frozen, so shared safely); text that does not parse is not kept.
 */
export function readConstraints(input: ConstraintsInput | undefined, what: string): Expr {
  if (typeof input !== "string") return parseConstraints(input, what);
  const known = parsedTexts.get(input);
  if (known !== undefined) return known;
  const parsed = parseConstraints(input, what);
  if (parsedTexts.size >= PARSED_TEXTS_LIMIT) parsedTexts.clear();
  parsedTexts.set(input, parsed);
  return parsed;
}

/** Constraint texts already parsed, by text; cleared when full (a bound on memory, ~100 bytes a short text). */
const parsedTexts = new Map<string, Expr>();
const PARSED_TEXTS_LIMIT = 16_384;

/** readConstraints without the cache of parsed texts (exported for the property test that compares the two). */
export function parseConstraints(input: ConstraintsInput | undefined, what: string): Expr {
  if (input === undefined) return TRUE;
  try {
    let expr: Expr;
    if (typeof input === "string") expr = fromText(input);
    else if ("$typeName" in input) expr = fromProto(input);
    else expr = input;
    const canonical = canonicalize(expr);
    toProto(canonical);
    return canonical;
  } catch (error) {
    throw new TypeError(`${what}: bad constraints: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/**
 * A variant's identity. Its `resource_name` message is made when first read: setting a new version of a variant
 * the set holds makes a `Variant` only to find the one it already has (entry.ts: one per variant, shared by its
 * versions), and nothing reads that one's message.
 */
class Variant implements VariantRef {
  readonly name: string;
  readonly text: string;
  readonly constraints: Expr;
  #resourceName: ResourceName | undefined;

  constructor(name: string, constraints: Expr) {
    this.name = name;
    this.text = canonicalText(constraints);
    this.constraints = constraints;
    Object.freeze(this);
  }

  get resourceName(): ResourceName {
    this.#resourceName ??= create(ResourceNameSchema, {
      name: this.name,
      dynamicParameterConstraints: toProto(this.constraints),
    });
    return this.#resourceName;
  }
}

/** The identity of the variant of `name` with `constraints` (canonical); undefined for `TRUE`. */
export function variantRef(name: string, constraints: Expr): VariantRef | undefined {
  return constraints.kind === "true" ? undefined : new Variant(name, constraints);
}

/** A variant about to be published, for the overlap check. */
export interface VariantCandidate {
  readonly variant: VariantRef | undefined;
  readonly allowOverlap: boolean;
}

/**
 * The variants (resources and errors) of one name in one type, and which one a subscription gets: the most specific
 * variant its parameters match, ties broken by canonical text (docs/decisions.md#ambiguous-variants), through the
 * matcher's own index, so the server and `@xdskit/xds-client` cannot choose differently. A subscription by name has
 * no parameters: it gets a variant the empty map matches. A name without constrained variants skips the index.
 */
export class VariantGroup {
  readonly name: string;
  /**
   * The entries by canonical text ("" for the unconstrained variant), in the order they were last set: the one entry
   * itself while there is only one (most names have one variant: no Map per name), else a Map.
   */
  #entries: Entry | Map<string, Entry> | undefined;
  /**
   * Built while the name has a constrained variant; without, the unconstrained entry is every subscription's. Its
   * values are the variants' keys, not their entries: a new version of a variant (same key, so same constraints)
   * leaves the index as it is.
   */
  #index: VariantIndex<string> | undefined;
  #overlapping = false;

  constructor(name: string) {
    this.name = name;
  }

  get size(): number {
    const entries = this.#entries;
    return entries === undefined ? 0 : entries instanceof Map ? entries.size : 1;
  }

  /**
   * Some parameter map matches two variants (they were published with overlaps allowed). A response carrying one
   * variant of such a name then carries every variant the stream's subscriptions of the name hold, so that a client
   * choosing among what it receives chooses what the server chose.
   */
  get overlapping(): boolean {
    return this.#overlapping;
  }

  /** The entry of the variant with this canonical text ("" for the unconstrained one). */
  get(text: string): Entry | undefined {
    const entries = this.#entries;
    if (entries instanceof Map) return entries.get(text);
    return entries !== undefined && textOf(entries) === text ? entries : undefined;
  }

  values(): IterableIterator<Entry> {
    const entries = this.#entries;
    if (entries instanceof Map) return entries.values();
    return (entries === undefined ? [] : [entries]).values();
  }

  /** Whether a resource (not only errors) is published under the name. */
  hasResource(): boolean {
    for (const entry of this.values()) if (entry.kind === "resource") return true;
    return false;
  }

  /** The variant a subscription with these parameters gets (none: a subscription by name), if any. */
  choose(params: Params | undefined): Entry | undefined {
    if (this.#index === undefined) return this.get("");
    const text = this.#index.select(params ?? NO_PARAMETERS)?.variant.value;
    return text === undefined ? undefined : this.get(text);
  }

  /** Adds or replaces the entry of its variant (the caller checked overlaps). */
  set(entry: Entry): void {
    const text = textOf(entry);
    const replacing = this.get(text) !== undefined;
    const entries = this.#entries;
    if (entries === undefined || (!(entries instanceof Map) && textOf(entries) === text)) this.#entries = entry;
    else if (entries instanceof Map) {
      entries.delete(text);
      entries.set(text, entry);
    } else {
      this.#entries = new Map([
        [textOf(entries), entries],
        [text, entry],
      ]);
    }
    if (this.#index !== undefined) {
      if (!replacing) this.#index.add(entry.variant?.constraints ?? TRUE, text);
    } else if (entry.variant !== undefined) {
      const index = createVariantIndex<string>();
      for (const e of this.values()) index.add(e.variant?.constraints ?? TRUE, textOf(e));
      this.#index = index;
    }
  }

  /**
   * Removes a variant; returns it, if there was one. `recheck`: work out again whether the remaining variants overlap
   * (false when `settleOverlaps` follows).
   */
  delete(text: string, recheck = true): Entry | undefined {
    const entry = this.get(text);
    if (entry === undefined) return undefined;
    const entries = this.#entries;
    if (entries instanceof Map) {
      entries.delete(text);
      if (entries.size === 1) this.#entries = entries.values().next().value;
    } else this.#entries = undefined;
    const only = this.#entries;
    if (only === undefined || (!(only instanceof Map) && only.variant === undefined)) this.#index = undefined;
    else this.#index?.remove(entry.variant?.constraints ?? TRUE);
    if (recheck && this.#overlapping) this.#overlapping = findOverlaps(this.#candidates()).length > 0;
    return entry;
  }

  /**
   * Checks `incoming` (new variants, or new versions of existing ones) against the variants they would sit beside
   * (`replaceAll`: they are the name's whole new set), and throws OverlappingVariantsError for the first pair that
   * overlaps where neither side allows it. Returns whether the name would have overlapping variants; nothing
   * changes until `set` (and `settleOverlaps`) are called.
   */
  checkOverlaps(
    typeUrl: string,
    incoming: readonly VariantCandidate[],
    replaceAll: boolean,
    allowAll: boolean,
  ): boolean | undefined {
    // A new version of a variant keeps its constraints: only new constraints, or a variant taking back its
    // permission, can make a new overlap.
    const changesShape = incoming.some((c) => {
      const existing = this.get(c.variant?.text ?? "");
      return replaceAll || existing === undefined || (existing.allowOverlap && !c.allowOverlap);
    });
    if (!changesShape) return undefined;
    const texts = new Set(incoming.map((c) => c.variant?.text ?? ""));
    const kept = replaceAll ? [] : [...this.values()].filter((e) => !texts.has(textOf(e)));
    if (kept.length + incoming.length < 2) return false;
    const items = [
      ...incoming.map((c) => ({ ...toItem(c), incoming: true })),
      ...kept.map((e) => ({ ...toItem(e), incoming: false })),
    ];
    const overlaps = findOverlaps(items);
    for (const { first, second, witness } of overlaps) {
      if (!(first.incoming || second.incoming) || allowAll || first.allowOverlap || second.allowOverlap) continue;
      throw new OverlappingVariantsError(typeUrl, this.name, [first.text, second.text], witness);
    }
    return overlaps.length > 0;
  }

  /** Records the outcome of `checkOverlaps` once its variants are set (undefined: unchanged). */
  settleOverlaps(overlapping: boolean | undefined): void {
    if (overlapping !== undefined) this.#overlapping = overlapping;
  }

  #candidates(): { constraints: Expr }[] {
    return [...this.values()].map((e) => ({ constraints: e.variant?.constraints ?? TRUE }));
  }
}

/** An entry's key in its group: its canonical constraints, "" for the unconstrained variant. */
const textOf = (entry: Entry): string => entry.variant?.text ?? "";

function toItem(c: VariantCandidate) {
  return {
    constraints: c.variant?.constraints ?? TRUE,
    text: c.variant?.text ?? "true",
    allowOverlap: c.allowOverlap,
  };
}
