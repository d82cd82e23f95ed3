import { type DescMessage, fromBinary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";

/**
 * Collects validation failures of one resource, each prefixed with the path of the field at fault
 * (`virtual_hosts[2].routes[0].match: invalid path specifier`). Paths are built by the caller only when it reports a
 * failure, so the valid path through a decoder allocates no path strings.
 */
export class ValidationErrors {
  private readonly items: string[] = [];

  /** Records `message` for the field at `path` (an empty path means the resource itself). */
  add(path: string, message: string): void {
    this.items.push(path === "" ? message : `${path}: ${message}`);
  }

  /** How many failures were recorded: compare before and after a sub-parse to tell whether it failed. */
  get count(): number {
    return this.items.length;
  }

  get ok(): boolean {
    return this.items.length === 0;
  }

  /** The failures in the order found, joined with `; `. */
  toString(): string {
    return this.items.join("; ");
  }
}

/** `parent.child`, or `child` at the top level. */
export function fieldPath(parent: string, child: string): string {
  return parent === "" ? child : `${parent}.${child}`;
}

/** Freezes a JSON value and everything inside it (values produced by `toJson` or by a converter here). */
export function deepFreezeJson<T extends JsonValue>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    if (Array.isArray(value)) {
      for (const item of value) deepFreezeJson(item);
    } else {
      const object = value as JsonObject;
      for (const key in object) deepFreezeJson(object[key] as JsonValue);
    }
    Object.freeze(value);
  }
  return value;
}

/** Where an update keeps the bytes its `raw` is decoded from (own, not enumerable: spreads and JSON leave it out). */
const RAW_BYTES = Symbol("xdskit.rawBytes");
/** Each update's `raw`, once read. */
const decodedRaw = new WeakMap<object, unknown>();
/** One prototype per message type, holding the `raw` getter. */
const rawPrototypes = new Map<DescMessage, object>();

function rawPrototype(schema: DescMessage): object {
  let prototype = rawPrototypes.get(schema);
  if (prototype === undefined) {
    prototype = Object.freeze<object>(
      Object.create(Object.prototype, {
        raw: {
          get(this: { readonly [RAW_BYTES]: Uint8Array }) {
            let raw = decodedRaw.get(this);
            if (raw === undefined) {
              raw = fromBinary(schema, this[RAW_BYTES]);
              decodedRaw.set(this, raw);
            }
            return raw;
          },
          enumerable: false,
        },
      }),
    );
    rawPrototypes.set(schema, prototype);
  }
  return prototype;
}

/**
 * The update, frozen, with a `raw` message of `schema` decoded from `bytes` when first read (then kept). `raw` is an
 * inherited getter, so it stays out of `JSON.stringify`, spreads, `Object.keys` and structural comparisons; one
 * prototype per message type keeps each update's own properties to its fields and the bytes.
 */
export function withLazyRaw<T extends object, R>(
  update: T,
  schema: DescMessage,
  bytes: Uint8Array,
): T & { readonly raw: R } {
  const out = Object.assign(Object.create(rawPrototype(schema)) as T, update);
  Object.defineProperty(out, RAW_BYTES, { value: bytes });
  return Object.freeze(out) as T & { readonly raw: R };
}

/** The shared empty array of updates (frozen; never mutated). */
export const EMPTY: readonly never[] = Object.freeze([]);

/** An uint32 wrapper value above 2^32-1 cannot arrive on the wire; sums of them can. */
export const UINT32_MAX = 0xffffffff;
