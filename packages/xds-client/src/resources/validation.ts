import { type DescMessage, fromBinary, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { bytesText, textBytes } from "../wire/resource-bytes.js";

/**
 * Collects validation failures of one resource, each prefixed with the path of the field at fault
 * (`virtual_hosts[2].routes[0].match: invalid path specifier`). Paths are built by the caller only when it reports a
 * failure, so the valid path through a decoder allocates no path strings.
 */
export class ValidationErrors {
  /** Made by the first failure: most resources have none. */
  private items: string[] | undefined = undefined;

  /** Records `message` for the field at `path` (an empty path means the resource itself). */
  add(path: string, message: string): void {
    const item = path === "" ? message : `${path}: ${message}`;
    if (this.items === undefined) this.items = [item];
    else this.items.push(item);
  }

  /** How many failures were recorded: compare before and after a sub-parse to tell whether it failed. */
  get count(): number {
    return this.items === undefined ? 0 : this.items.length;
  }

  get ok(): boolean {
    return this.items === undefined;
  }

  /** The failures in the order found, joined with `; `. */
  toString(): string {
    return this.items === undefined ? "" : this.items.join("; ");
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

/** Each update's `raw`, once read. */
const decodedRaw = new WeakMap<object, unknown>();

/**
 * What an update is an instance of: it keeps the bytes its `raw` getter decodes, in a private field, as the client
 * keeps a resource's bytes (resource-bytes.ts: the same string, so an update costs no second copy).
 */
type RawHolder = new (bytes: string) => object;

/** One class per message type. */
const rawHolders = new Map<DescMessage, RawHolder>();

function rawHolder(schema: DescMessage): RawHolder {
  let holder = rawHolders.get(schema);
  if (holder === undefined) {
    holder = class {
      readonly #bytes: string;
      constructor(bytes: string) {
        this.#bytes = bytes;
      }
      get raw(): unknown {
        let raw = decodedRaw.get(this);
        if (raw === undefined) {
          raw = fromBinary(schema, textBytes(this.#bytes));
          decodedRaw.set(this, raw);
        }
        return raw;
      }
    };
    rawHolders.set(schema, holder);
  }
  return holder;
}

/**
 * The update, frozen, with a `raw` message of `schema` decoded from `bytes` when first read (then kept). `raw` is a
 * getter of the update's class and the bytes a private field, so neither shows in `JSON.stringify`, spreads,
 * `Object.keys` or structural comparisons.
 */
export function withLazyRaw<T extends object, R>(
  update: T,
  schema: DescMessage,
  bytes: Uint8Array,
): T & { readonly raw: R } {
  const Holder = rawHolder(schema);
  return Object.freeze(Object.assign(new Holder(bytesText(bytes)), update)) as T & { readonly raw: R };
}

/** The shared empty array of updates (frozen; never mutated). */
export const EMPTY: readonly never[] = Object.freeze([]);

/**
 * `items` as an update keeps them: frozen, in an array of exactly their length, or the shared `EMPTY` when there are
 * none. An array grown by `push` has room for more (17 slots after its first push: about 130 bytes more than one item
 * needs), and an update lives as long as its resource is cached: a cached EDS resource of one endpoint held four such
 * arrays, about 45% of its heap (docs/architecture.md, "What a cached resource holds").
 */
export function keptList<T>(items: readonly T[]): readonly T[] {
  return items.length === 0 ? EMPTY : Object.freeze(items.slice());
}

/**
 * `list` with `item` appended, for a list an update will keep (`keptAppended`): the first item makes an array of
 * exactly one element, the length of most lists in an update, so that it can be kept as it is.
 */
export function appendTo<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}

/** A list built by `appendTo` (undefined: no item) as an update keeps it, like `keptList` but copying only a longer one. */
export function keptAppended<T>(list: T[] | undefined): readonly T[] {
  if (list === undefined) return EMPTY;
  return list.length === 1 ? Object.freeze(list) : Object.freeze(list.slice());
}

/** An uint32 wrapper value above 2^32-1 cannot arrive on the wire; sums of them can. */
export const UINT32_MAX = 0xffffffff;
