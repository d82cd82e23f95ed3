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

function slotOf(init: SlotInit): Slot {
  const params = init.params ?? NO_PARAMS;
  const keys = Object.keys(params).sort();
  if (keys.length === 0) return { key: plainKey(init.name), name: init.name, params: NO_PARAMS, explicit: true };
  let key = `\u0001${init.name.length}:${init.name}`;
  const sorted: Record<string, string> = {};
  for (const k of keys) {
    const v = params[k] as string;
    key += `${k.length}:${k}${v.length}:${v}`;
    sorted[k] = v;
  }
  return { key, name: init.name, params: Object.freeze(sorted), explicit: true };
}

/** What one stream subscribes to for one type. Shared by the SotW and delta streams. */
export class TypeSubscription {
  readonly typeUrl: string;
  #wildcard = false;
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
    return this.#wildcard;
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
      let key = `${this.typeUrl.length}:${this.typeUrl}${this.#wildcard ? "*" : "-"}`;
      for (const slotKey of this.#slots.keys()) key += `${slotKey.length}:${slotKey}`;
      this.#key = key;
    }
    return this.#key;
  }

  /** Whether a name is subscribed at all (explicitly or by the wildcard). */
  isSubscribed(name: string): boolean {
    return this.#wildcard || this.#byName.has(name);
  }

  /** Whether a slot key is one of the subscriptions (a subscription without parameters is covered by the wildcard). */
  hasSlot(key: string): boolean {
    return this.#slots.has(key) || (this.#wildcard && isPlainKey(key));
  }

  /** The subscriptions of a name: the explicit ones, plus the one the wildcard makes unless the client named it. */
  slotsOf(name: string): readonly Slot[] {
    const explicit = this.#byName.get(name);
    if (!this.#wildcard) return explicit ?? [];
    const key = plainKey(name);
    if (explicit?.some((slot) => slot.key === key)) return explicit;
    const covered: Slot = { key, name, params: NO_PARAMS, explicit: false };
    return explicit ? [...explicit, covered] : [covered];
  }

  /** The explicit subscriptions of a name (none for a name only the wildcard covers). */
  explicitSlotsOf(name: string): readonly Slot[] {
    return this.#byName.get(name) ?? NO_SLOTS;
  }

  /**
   * Replaces the explicit subscriptions (`*` among them is left out: pass `wildcard`). Returns whether anything
   * changed: a SotW ACK repeats the subscription, and an unchanged one keeps its key.
   */
  replace(inits: readonly SlotInit[], wildcard: boolean): boolean {
    const slots = inits.filter((init) => init.name !== "*").map(slotOf);
    if (wildcard === this.#wildcard && this.#sameSlots(slots)) return false;
    this.#slots.clear();
    this.#byName.clear();
    for (const slot of slots) this.#add(slot);
    this.#wildcard = wildcard;
    this.#key = undefined;
    return true;
  }

  /** Adds subscriptions (`*` turns the wildcard on). Returns whether anything changed. */
  subscribe(inits: Iterable<SlotInit>): boolean {
    let changed = false;
    for (const init of inits) {
      if (init.name === "*") {
        changed ||= !this.#wildcard;
        this.#wildcard = true;
      } else changed = this.#add(slotOf(init)) || changed;
    }
    return this.#changed(changed);
  }

  /** Removes subscriptions (`*` turns the wildcard off). Returns whether anything changed. */
  unsubscribe(inits: Iterable<SlotInit>): boolean {
    let changed = false;
    for (const init of inits) {
      if (init.name === "*") {
        changed ||= this.#wildcard;
        this.#wildcard = false;
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

  /** The same slots in the same order (a list with duplicates never matches: it is replaced, which collapses them). */
  #sameSlots(slots: readonly Slot[]): boolean {
    if (slots.length !== this.#slots.size) return false;
    let i = 0;
    for (const key of this.#slots.keys()) if (slots[i++]?.key !== key) return false;
    return true;
  }
}
