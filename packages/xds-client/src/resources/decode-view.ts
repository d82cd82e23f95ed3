import type { Any } from "@bufbuild/protobuf/wkt";
import type { DecodeResult } from "../wire/resource-type.js";
import { ValidationErrors, withLazyRaw } from "./validation.js";
import { readView, referenceDecoding, type ViewReader } from "./view-runtime.js";

/** A built-in resource type's message: its type URL, its name in errors, its view, and where its name is. */
export interface ResourceMessage<V> {
  readonly typeUrl: string;
  /** `Cluster`, `ClusterLoadAssignment`, ... */
  readonly label: string;
  readonly reader: ViewReader<V>;
  nameOf(view: V): string;
}

/**
 * A reader that skips the views for the bytes it knows (endpoint-plain.ts): for those, the update `validate` would
 * make of their view, else undefined. It stands aside while the reference decoding is on.
 */
export interface PlainReader<U> {
  read(bytes: Uint8Array): U | undefined;
  nameOf(update: U): string;
}

/**
 * Decodes a resource the way every built-in type does: the type URL checked, the message read as its view (exactly
 * what `fromBinary` accepts), validated, and the update given a `raw` decoded from the same bytes when first read.
 * `validate` reports into `errors`; it returns undefined (or reports) when the resource is invalid.
 */
export function decodeResource<V, U extends object, R>(
  resource: Any,
  message: ResourceMessage<V>,
  validate: (view: V, errors: ValidationErrors) => U | undefined,
  plain?: PlainReader<U>,
): DecodeResult<U & { readonly raw: R }> {
  if (resource.typeUrl !== message.typeUrl) {
    return { ok: false, error: `unexpected type_url "${resource.typeUrl}" for ${message.label}` };
  }
  const bytes = resource.value;
  if (plain !== undefined && !referenceDecoding()) {
    const update = plain.read(bytes);
    if (update !== undefined) {
      return { ok: true, name: plain.nameOf(update), value: withLazyRaw(update, message.reader.schema, bytes) };
    }
  }
  let view: V;
  try {
    view = readView(message.reader, bytes);
  } catch (error) {
    return { ok: false, error: `can't parse ${message.label} resource: ${(error as Error).message}` };
  }
  const name = message.nameOf(view);
  const errors = new ValidationErrors();
  const update = validate(view, errors);
  if (update === undefined || !errors.ok) return { ok: false, name, error: errors.toString() };
  return { ok: true, name, value: withLazyRaw(update, message.reader.schema, bytes) };
}
