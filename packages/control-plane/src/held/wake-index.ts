import type { Expr } from "@xdskit/constraint-matcher";
import type { TypeSubscription } from "../streams/subscription.js";
import { type ChangedVariants, NAMES_LOOKED_AT, WHOLE_NAME } from "./change-scope.js";

// Index keys, injective: a type's wildcard subscribers; a name's subscribers; a name's subscribers with one
// parameter at one value.
const wildcardKey = (typeUrl: string) => `*${typeUrl.length}:${typeUrl}`;
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

/**
 * Which streams subscribe to what, so that a change finds the streams it may concern (change-scope.ts) without
 * visiting every stream: a variant that requires `key=value` looks up the subscriptions of its name with that
 * parameter; any other variant, the name's subscribers and the type's wildcard subscribers. What it returns is a
 * superset: each stream still checks `concerns` for itself.
 */
export class WakeIndex<Stream> {
  readonly #streams = new Map<string, Set<Stream>>();
  /** stream -> type URL -> the keys it is indexed under and the subscription key they were made from. */
  readonly #keysOf = new Map<Stream, Map<string, { readonly sub: string; readonly keys: readonly string[] }>>();

  /** Records what a stream subscribes to of a type (a no-op when that did not change). */
  update(stream: Stream, sub: TypeSubscription): void {
    let types = this.#keysOf.get(stream);
    const previous = types?.get(sub.typeUrl);
    if (previous?.sub === sub.key) return;
    if (previous) this.#remove(stream, previous.keys);
    const keys = new Set<string>();
    if (sub.wildcard) keys.add(wildcardKey(sub.typeUrl));
    for (const slot of sub.slots.values()) {
      keys.add(nameKey(sub.typeUrl, slot.name));
      for (const key in slot.params) {
        keys.add(paramKey(sub.typeUrl, slot.name, key, slot.params[key] as string));
      }
    }
    for (const key of keys) {
      let streams = this.#streams.get(key);
      if (!streams) {
        streams = new Set();
        this.#streams.set(key, streams);
      }
      streams.add(stream);
    }
    if (!types) {
      types = new Map();
      this.#keysOf.set(stream, types);
    }
    types.set(sub.typeUrl, { sub: sub.key, keys: [...keys] });
  }

  /** Forgets a stream (it closed). */
  forget(stream: Stream): void {
    for (const { keys } of this.#keysOf.get(stream)?.values() ?? []) this.#remove(stream, keys);
    this.#keysOf.delete(stream);
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
          if (required) add(paramKey(typeUrl, name, required.key, required.value));
          else anyone = true;
        }
        if (anyone) {
          add(nameKey(typeUrl, name));
          add(wildcardKey(typeUrl));
        }
      }
    }
    return out;
  }

  #remove(stream: Stream, keys: readonly string[]): void {
    for (const key of keys) {
      const streams = this.#streams.get(key);
      streams?.delete(stream);
      if (streams?.size === 0) this.#streams.delete(key);
    }
  }
}
