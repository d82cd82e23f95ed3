import type { Expr } from "@xdskit/constraint-matcher";
import { type ChangedVariants, NAMES_LOOKED_AT, WHOLE_NAME } from "../subscriptions/change-scope.js";
import type { Slot, TypeSubscription } from "../subscriptions/subscription.js";

// Index keys, injective: a type's wildcard subscribers; its wildcard subscribers with one parameter at one value; a
// name's subscribers; a name's subscribers with one parameter at one value.
const wildcardKey = (typeUrl: string) => `*${typeUrl.length}:${typeUrl}`;
const wildcardParamKey = (typeUrl: string, key: string, value: string) =>
  `w${typeUrl.length}:${typeUrl}${key.length}:${key}${value.length}:${value}`;
const nameKey = (typeUrl: string, name: string) => `n${typeUrl.length}:${typeUrl}${name.length}:${name}`;
const paramKey = (typeUrl: string, name: string, key: string, value: string) =>
  `p${typeUrl.length}:${typeUrl}${name.length}:${name}${key.length}:${key}${value.length}:${value}`;

/** A `key=value` every parameter map the constraints match has (canonical constraints), if any. */
function requiredValue(constraints: Expr): { readonly key: string; readonly value: string } | undefined {
  if (constraints.kind === "value") return constraints;
  if (constraints.kind !== "and") return undefined;
  for (const child of constraints.children) if (child.kind === "value") return child;
  return undefined;
}

/** The index keys one explicit subscription of a type puts its stream under: its name, and each parameter. */
function slotKeys(typeUrl: string, slot: Slot): readonly string[] {
  const keys = [nameKey(typeUrl, slot.name)];
  for (const key in slot.params) keys.push(paramKey(typeUrl, slot.name, key, slot.params[key] as string));
  return keys;
}

/** The index keys a stream's wildcards of a type put it under: the type's, and each parameter of each wildcard. */
function wildcardKeys(sub: TypeSubscription): readonly string[] {
  if (!sub.wildcard) return [];
  const keys = new Set([wildcardKey(sub.typeUrl)]);
  for (const { params } of sub.wildcards) {
    for (const key in params) keys.add(wildcardParamKey(sub.typeUrl, key, params[key] as string));
  }
  return [...keys];
}

/** What one stream's subscription of one type is indexed under. */
interface Indexed {
  /** The subscription key it was last brought up to date with. */
  subKey: string;
  wildcardKeys: readonly string[];
  /** Each explicit subscription indexed, by slot key, with its index keys (a slot key always has the same ones). */
  readonly slots: Map<string, readonly string[]>;
  /** How many of the subscriptions stand behind each index key (slots of one name share the name's). */
  readonly counts: Map<string, number>;
}

/**
 * Which streams subscribe to what, so that a change finds the streams it may concern (change-scope.ts) without
 * visiting every stream: a variant that requires `key=value` looks up the subscriptions of its name with that
 * parameter and the type's wildcard subscribers with it; any other variant, the name's subscribers and the type's
 * wildcard subscribers. What it returns is a
 * superset: each stream still checks `concerns` for itself.
 *
 * A subscription change costs the index what changed: a delta stream subscribing to one more name among 10,000
 * indexes one slot, rather than all 10,000 again. Finding the new slots is one pass of map lookups over the
 * subscription (it does not say what changed); slots that are gone are looked for only when some are
 * (wake-index.test.ts checks the index against the final subscriptions after any sequence of changes).
 */
export class WakeIndex<Stream> {
  readonly #streams = new Map<string, Set<Stream>>();
  /** stream -> type URL -> what it is indexed under. */
  readonly #indexed = new Map<Stream, Map<string, Indexed>>();

  /** Records what a stream subscribes to of a type (a no-op when that did not change). */
  update(stream: Stream, sub: TypeSubscription): void {
    let types = this.#indexed.get(stream);
    let indexed = types?.get(sub.typeUrl);
    if (indexed?.subKey === sub.key) return;
    if (!indexed) {
      indexed = { subKey: sub.key, wildcardKeys: [], slots: new Map(), counts: new Map() };
      if (!types) {
        types = new Map();
        this.#indexed.set(stream, types);
      }
      types.set(sub.typeUrl, indexed);
    }
    indexed.subKey = sub.key;
    const keys = wildcardKeys(sub);
    if (keys.length > 0 || indexed.wildcardKeys.length > 0) {
      const before = indexed.wildcardKeys;
      for (const key of keys) if (!before.includes(key)) this.#hold(stream, indexed, key);
      for (const key of before) if (!keys.includes(key)) this.#letGo(stream, indexed, key);
      indexed.wildcardKeys = keys;
    }
    const before = indexed.slots.size;
    let kept = 0;
    for (const [slotKey, slot] of sub.slots) {
      if (indexed.slots.has(slotKey)) {
        kept++;
        continue;
      }
      const keys = slotKeys(sub.typeUrl, slot);
      indexed.slots.set(slotKey, keys);
      for (const key of keys) this.#hold(stream, indexed, key);
    }
    if (kept === before) return;
    for (const [slotKey, keys] of indexed.slots) {
      if (sub.slots.has(slotKey)) continue;
      indexed.slots.delete(slotKey);
      for (const key of keys) this.#letGo(stream, indexed, key);
    }
  }

  /** Forgets a stream (it closed). */
  forget(stream: Stream): void {
    for (const { counts } of this.#indexed.get(stream)?.values() ?? []) {
      for (const key of counts.keys()) this.#remove(stream, key);
    }
    this.#indexed.delete(stream);
  }

  /** The streams a change may concern; undefined when any stream may (too many names to look up). */
  candidates(changed: ChangedVariants): Set<Stream> | undefined {
    const out = new Set<Stream>();
    const add = (key: string): void => {
      for (const stream of this.#streams.get(key) ?? []) out.add(stream);
    };
    for (const [typeUrl, names] of changed) {
      if (names.size > NAMES_LOOKED_AT) return undefined;
      for (const [name, variants] of names) {
        let anyone = variants === WHOLE_NAME;
        for (const constraints of variants ?? []) {
          const required = requiredValue(constraints);
          if (required) {
            add(paramKey(typeUrl, name, required.key, required.value));
            add(wildcardParamKey(typeUrl, required.key, required.value));
          } else anyone = true;
        }
        if (anyone) {
          add(nameKey(typeUrl, name));
          add(wildcardKey(typeUrl));
        }
      }
    }
    return out;
  }

  /** One more of the stream's subscriptions stands behind `key`. */
  #hold(stream: Stream, indexed: Indexed, key: string): void {
    const count = indexed.counts.get(key) ?? 0;
    indexed.counts.set(key, count + 1);
    if (count > 0) return;
    let streams = this.#streams.get(key);
    if (!streams) {
      streams = new Set();
      this.#streams.set(key, streams);
    }
    streams.add(stream);
  }

  /** One fewer of the stream's subscriptions stands behind `key`: the stream leaves it with the last. */
  #letGo(stream: Stream, indexed: Indexed, key: string): void {
    const count = (indexed.counts.get(key) ?? 0) - 1;
    if (count > 0) {
      indexed.counts.set(key, count);
      return;
    }
    indexed.counts.delete(key);
    this.#remove(stream, key);
  }

  #remove(stream: Stream, key: string): void {
    const streams = this.#streams.get(key);
    streams?.delete(stream);
    if (streams?.size === 0) this.#streams.delete(key);
  }
}
