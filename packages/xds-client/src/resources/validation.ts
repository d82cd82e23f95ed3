import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

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

/**
 * Attaches the decoded message as a non-enumerable `raw` property, decoded when first read (then kept), and freezes
 * the update. `raw` is left out of `JSON.stringify`, spreads and structural comparisons of updates. `decode` runs
 * once; if the bytes cannot be decoded by the full schema, reading `raw` throws.
 */
export function withLazyRaw<T extends object, R>(update: T, decode: () => R): T & { readonly raw: R } {
  let raw: R | undefined;
  Object.defineProperty(update, "raw", {
    get: () => {
      raw ??= decode();
      return raw;
    },
    enumerable: false,
    configurable: false,
  });
  return Object.freeze(update) as T & { readonly raw: R };
}

/** The shared empty array of updates (frozen; never mutated). */
export const EMPTY: readonly never[] = Object.freeze([]);

/** An uint32 wrapper value above 2^32-1 cannot arrive on the wire; sums of them can. */
export const UINT32_MAX = 0xffffffff;
