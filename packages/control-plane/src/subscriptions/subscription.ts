/**
 * One subscription of a stream: a resource name, and the dynamic parameters of its `ResourceLocator` (TP2; none for
 * a name in `resource_names`). A name may be subscribed several times with different parameters, each getting the
 * variant its parameters match. The key identifies it among the stream's subscriptions of a type and keys what the
 * server believes the client holds for it (held-state.ts).
 */
export interface Slot {
  readonly key: string;
  readonly name: string;
  /** Empty for a subscription by name, which TP2 matches like an empty parameter map. */
  readonly params: Readonly<Record<string, string>>;
  /** Named by the client; false for a name a wildcard subscription covers. */
  readonly explicit: boolean;
}

/** A subscription as a request gives it. */
export interface SlotInit {
  readonly name: string;
  readonly params?: Readonly<Record<string, string>>;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NO_SLOTS: readonly Slot[] = Object.freeze([]);

type Params = Readonly<Record<string, string>>;

// Slot keys: a subscription by name is keyed by the name itself (so the common case costs nothing), escaped with a
// leading \u0000 when the name starts with \u0000 or \u0001; a locator with parameters starts with \u0001. Injective.

/** The key of the subscription of `name` without parameters. */
export function plainKey(name: string): string {
  const first = name.charCodeAt(0);
  return first === 0 || first === 1 ? `\u0000${name}` : name;
}

/** Whether a key is a subscription without parameters (which a wildcard covers). */
export function isPlainKey(key: string): boolean {
  return key.charCodeAt(0) !== 1;
}

/** The name of a subscription without parameters, from its key. */
export function nameOfPlainKey(key: string): string {
  return key.charCodeAt(0) === 0 ? key.slice(1) : key;
}

/**
 * How a subscription reads: its name, then for a locator its parameters in braces, sorted by key, with `%` `,` `=`
 * `{` `}` percent-encoded (`svc{env=prod,version=v2}`), as the client's CSDS names it.
 */
export function subscriptionLabel(slot: Slot): string {
  const keys = Object.keys(slot.params);
  if (keys.length === 0) return slot.name;
  const encode = (s: string) => s.replace(/[%,={}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${slot.name}{${keys.map((k) => `${encode(k)}=${encode(slot.params[k] as string)}`).join(",")}}`;
}

/** A parameter map sorted by key and frozen (NO_PARAMS when empty), and the part of a slot key it makes. */
function sortedParams(params: Params | undefined): { readonly params: Params; readonly suffix: string } {
  const keys = params === undefined ? [] : Object.keys(params);
  if (keys.length === 0) return { params: NO_PARAMS, suffix: "" };
  keys.sort();
  let suffix = "";
  const sorted: Record<string, string> = {};
  for (const k of keys) {
    const v = (params as Params)[k] as string;
    suffix += `${k.length}:${k}${v.length}:${v}`;
    sorted[k] = v;
  }
  return { params: Object.freeze(sorted), suffix };
}

function slotOf(init: SlotInit): Slot {
  const { params, suffix } = sortedParams(init.params);
  if (suffix === "") return { key: plainKey(init.name), name: init.name, params: NO_PARAMS, explicit: true };
  return { key: `\u0001${init.name.length}:${init.name}${suffix}`, name: init.name, params, explicit: true };
}

/** The name of a locator key whose parameters part is `suffix`, else undefined. */
function nameOfLocatorKey(key: string, suffix: string): string | undefined {
  if (key.charCodeAt(0) !== 1 || !key.endsWith(suffix)) return undefined;
  const colon = key.indexOf(":");
  const length = Number(key.slice(1, colon));
  if (!(colon > 1) || !Number.isSafeInteger(length) || colon + 1 + length + suffix.length !== key.length) {
    return undefined;
  }
  return key.slice(colon + 1, colon + 1 + length);
}

/** One wildcard subscription of a stream: `*` with a parameter map (none, mostly). */
export interface Wildcard {
  readonly params: Params;
  /** The slot-key part of `params` ("" for none): what the covered slots' keys end with. */
  readonly suffix: string;
}

/**
 * The wildcards among `inits` (`*` by name, or as locators with parameters), each map once, in order; empty when none
 * names `*` (docs/decisions.md#wildcards-with-parameters).
 */
export function wildcardsOf(inits: readonly SlotInit[]): Wildcard[] {
  const out: Wildcard[] = [];
  for (const init of inits) {
    if (init.name !== "*") continue;
    const wildcard = sortedParams(init.params);
    if (!out.some((w) => w.suffix === wildcard.suffix)) out.push(wildcard);
  }
  return out;
}

/** The wildcard without parameters: `*` in `resource_names`, or the legacy empty request. */
export const PLAIN_WILDCARD: Wildcard = Object.freeze({ params: NO_PARAMS, suffix: "" });

/** What one stream subscribes to for one type. Shared by the SotW and delta streams. */
export class TypeSubscription {
  readonly typeUrl: string;
  /**
   * The wildcard subscriptions, by parameters suffix, in the order made: each covers every name of the type with its
   * parameters (TP2: each name gets the variant they match). Mostly none, or one without parameters.
   */
  readonly #wildcards = new Map<string, Wildcard>();
  /** Explicit subscriptions by key, in the order the client made them. */
  readonly #slots = new Map<string, Slot>();
  /** The same, by name. */
  readonly #byName = new Map<string, Slot[]>();
  #key: string | undefined;

  constructor(typeUrl: string) {
    this.typeUrl = typeUrl;
  }

  /** Subscribed to every resource of the type (`*`, or the legacy empty first request for LDS/CDS). */
  get wildcard(): boolean {
    return this.#wildcards.size > 0;
  }

  /** The wildcard subscriptions, each with its parameters (`*` in `resource_names` has none). */
  get wildcards(): readonly Wildcard[] {
    return [...this.#wildcards.values()];
  }

  /** How many wildcards (parameter maps) the stream holds. */
  get wildcardCount(): number {
    return this.#wildcards.size;
  }

  /** The only wildcard, when the stream has exactly one (the common case the diff's short path takes). */
  get soleWildcard(): Wildcard | undefined {
    if (this.#wildcards.size !== 1) return undefined;
    return this.#wildcards.values().next().value;
  }

  /** The slot key of the subscription `wildcard` makes of `name` (the name itself when it has no parameters). */
  coveredKey(name: string, wildcard: Wildcard): string {
    return wildcard.suffix === "" ? plainKey(name) : `\u0001${name.length}:${name}${wildcard.suffix}`;
  }

  /** The wildcard subscription a slot key is one of, with the name, else undefined. */
  coveredSlot(key: string): Slot | undefined {
    for (const wildcard of this.#wildcards.values()) {
      const name =
        wildcard.suffix === ""
          ? isPlainKey(key)
            ? nameOfPlainKey(key)
            : undefined
          : nameOfLocatorKey(key, wildcard.suffix);
      if (name !== undefined) return { key, name, params: wildcard.params, explicit: false };
    }
    return undefined;
  }

  /** The explicit subscriptions, in the order the client made them. */
  get slots(): ReadonlyMap<string, Slot> {
    return this.#slots;
  }

  /** Names subscribed explicitly (with or without parameters), in the order first subscribed. */
  names(): IterableIterator<string> {
    return this.#byName.keys();
  }

  /** Whether the name is subscribed explicitly, with or without parameters. */
  hasName(name: string): boolean {
    return this.#byName.has(name);
  }

  /**
   * Identifies the type and subscription: equal keys, equal subscriptions (in the same order). Computed once per
   * change, so streams that subscribe alike share what is built for them (see response-plan.ts).
   */
  get key(): string {
    if (this.#key === undefined) {
      let key = `${this.typeUrl.length}:${this.typeUrl}`;
      for (const suffix of this.#wildcards.keys()) key += `*${suffix.length}:${suffix}`;
      key += "-";
      for (const slotKey of this.#slots.keys()) key += `${slotKey.length}:${slotKey}`;
      this.#key = key;
    }
    return this.#key;
  }

  /** Whether a name is subscribed at all (explicitly or by a wildcard). */
  isSubscribed(name: string): boolean {
    return this.#wildcards.size > 0 || this.#byName.has(name);
  }

  /** Whether a slot key is one of the subscriptions (explicit, or one a wildcard makes). */
  hasSlot(key: string): boolean {
    return this.#slots.has(key) || (this.#wildcards.size > 0 && this.coveredSlot(key) !== undefined);
  }

  /** The subscriptions of a name: the explicit ones, plus each one a wildcard makes that the client did not name. */
  slotsOf(name: string): readonly Slot[] {
    const explicit = this.#byName.get(name);
    if (this.#wildcards.size === 0) return explicit ?? [];
    let out: Slot[] | undefined;
    for (const wildcard of this.#wildcards.values()) {
      const key = this.coveredKey(name, wildcard);
      if (explicit?.some((slot) => slot.key === key)) continue;
      out ??= explicit ? [...explicit] : [];
      out.push({ key, name, params: wildcard.params, explicit: false });
    }
    return out ?? explicit ?? [];
  }

  /** The explicit subscriptions of a name (none for a name only a wildcard covers). */
  explicitSlotsOf(name: string): readonly Slot[] {
    return this.#byName.get(name) ?? NO_SLOTS;
  }

  /**
   * Replaces the subscriptions: the explicit ones (`*` among them is left out) and the wildcards. Returns whether
   * anything changed: a SotW ACK repeats the subscription, and an unchanged one keeps its key.
   */
  replace(inits: readonly SlotInit[], wildcards: readonly Wildcard[]): boolean {
    const slots = inits.filter((init) => init.name !== "*").map(slotOf);
    if (this.#sameWildcards(wildcards) && this.#sameSlots(slots)) return false;
    this.#slots.clear();
    this.#byName.clear();
    for (const slot of slots) this.#add(slot);
    this.#wildcards.clear();
    for (const wildcard of wildcards) this.#wildcards.set(wildcard.suffix, wildcard);
    this.#key = undefined;
    return true;
  }

  /** Adds subscriptions (`*`, with the parameters of its locator, adds that wildcard). Returns whether anything changed. */
  subscribe(inits: Iterable<SlotInit>): boolean {
    let changed = false;
    for (const init of inits) {
      if (init.name === "*") {
        const wildcard = sortedParams(init.params);
        if (this.#wildcards.has(wildcard.suffix)) continue;
        this.#wildcards.set(wildcard.suffix, wildcard);
        changed = true;
      } else changed = this.#add(slotOf(init)) || changed;
    }
    return this.#changed(changed);
  }

  /** Removes subscriptions (`*`, with the parameters of its locator, removes that wildcard). Returns whether anything changed. */
  unsubscribe(inits: Iterable<SlotInit>): boolean {
    let changed = false;
    for (const init of inits) {
      if (init.name === "*") {
        changed = this.#wildcards.delete(sortedParams(init.params).suffix) || changed;
        continue;
      }
      const slot = slotOf(init);
      if (!this.#slots.delete(slot.key)) continue;
      changed = true;
      const same = (this.#byName.get(slot.name) as Slot[]).filter((s) => s.key !== slot.key);
      if (same.length === 0) this.#byName.delete(slot.name);
      else this.#byName.set(slot.name, same);
    }
    return this.#changed(changed);
  }

  #add(slot: Slot): boolean {
    if (this.#slots.has(slot.key)) return false;
    this.#slots.set(slot.key, slot);
    const same = this.#byName.get(slot.name);
    if (same) same.push(slot);
    else this.#byName.set(slot.name, [slot]);
    return true;
  }

  #changed(changed: boolean): boolean {
    if (changed) this.#key = undefined;
    return changed;
  }

  #sameWildcards(wildcards: readonly Wildcard[]): boolean {
    if (wildcards.length !== this.#wildcards.size) return false;
    let i = 0;
    for (const suffix of this.#wildcards.keys()) if (wildcards[i++]?.suffix !== suffix) return false;
    return true;
  }

  /** The same slots in the same order (a list with duplicates never matches: it is replaced, which collapses them). */
  #sameSlots(slots: readonly Slot[]): boolean {
    if (slots.length !== this.#slots.size) return false;
    let i = 0;
    for (const key of this.#slots.keys()) if (slots[i++]?.key !== key) return false;
    return true;
  }
}
