// Delta, the resources of a response read by the client (docs/architecture.md#the-delta-envelope): the default
// transport reads a delta response as `DeltaResponseBytes`, each resource the bytes of its encoded `Resource`, and the
// client reads each one here. A `Resource` encoded as servers encode one (its `version`, its `resource`, an `Any` of the
// response's type, and its `name`, each at most once, the strings ASCII) is read without protobuf-es, to the message
// protobuf-es reads from the same bytes; any other encoding is read by protobuf-es.
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type ExpectedTypeUrls, readPlainAnyIn, UnreadableResponseError } from "./any-reader.js";
import { asciiText, nextPlainField, plainField } from "./plain-fields.js";

/**
 * The plain encoding: fields 1 (version), 2 (resource) and 3 (name), each length-delimited, at most once, in any
 * order, lengths below 2^28, nothing else. Undefined for anything else (left to protobuf-es).
 */
export function readPlainResource(bytes: Uint8Array, expected: ExpectedTypeUrls): Resource | undefined {
  return readPlainResourceIn(bytes, 0, bytes.length, expected);
}

/**
 * `readPlainResource` of the Resource that is `bytes[start, end)`, walked field by field (no callback to allocate per
 * resource: a response holds thousands).
 */
export function readPlainResourceIn(
  bytes: Uint8Array,
  start: number,
  end: number,
  expected: ExpectedTypeUrls,
): Resource | undefined {
  let name: string | undefined;
  let version: string | undefined;
  let resource: Any | undefined;
  let pos = start;
  while (pos < end) {
    if (!nextPlainField(bytes, pos, end)) return undefined;
    const { tag, start: from, end: to } = plainField;
    // A field that is not plain (a non-ASCII string, an Any left to protobuf-es) reads as undefined.
    if (tag === 0x0a && version === undefined) {
      version = asciiText(bytes, from, to);
      if (version === undefined) return undefined;
    } else if (tag === 0x12 && resource === undefined) {
      resource = readPlainAnyIn(bytes, from, to, expected);
      if (resource === undefined) return undefined;
    } else if (tag === 0x1a && name === undefined) {
      name = asciiText(bytes, from, to);
      if (name === undefined) return undefined;
    } else return undefined;
    pos = to;
  }
  // The keys in protobuf-es's order (a message it reads has them so), each shape made whole at once.
  const $typeName = "envoy.service.discovery.v3.Resource";
  return (
    resource === undefined
      ? { $typeName, name: name ?? "", aliases: [], version: version ?? "" }
      : { $typeName, name: name ?? "", aliases: [], version: version ?? "", resource }
  ) as Resource;
}

/**
 * An entry of a delta response's `resources` as the `Resource` it encodes, read as protobuf-es reads it inside the
 * envelope (the same checks and recursion budget, the envelope one level up). A failure fails the whole response, as
 * it did when the transport read the envelope with its `Resource`s. `expected` holds the response's type URL.
 */
export function readResource(bytes: Uint8Array, expected: ExpectedTypeUrls): Resource {
  return readResourceIn(bytes, 0, bytes.length, expected);
}

/** `readResource` of the entry that is `bytes[start, end)`: a view of it is made only for protobuf-es. */
export function readResourceIn(bytes: Uint8Array, start: number, end: number, expected: ExpectedTypeUrls): Resource {
  const plain = readPlainResourceIn(bytes, start, end, expected);
  if (plain !== undefined) return plain;
  try {
    return fromBinary(ResourceSchema, bytes.subarray(start, end), { recursionLimit: 99 });
  } catch (error) {
    throw new UnreadableResponseError(error);
  }
}
