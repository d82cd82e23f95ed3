import { fromBinary, type JsonObject, toJson } from "@bufbuild/protobuf";
import type { AnyView } from "../gen/google/protobuf/any_view.js";
import { TypedStructSchema } from "./typed-struct-schema.js";
import { deepFreezeJson, fieldPath, type ValidationErrors } from "./validation.js";
import { readView, type ViewReader } from "./view-runtime.js";

/**
 * The payload of a typed extension (`google.protobuf.Any`), after unwrapping `xds.type.v3.TypedStruct` /
 * `udpa.type.v1.TypedStruct`: either the serialized message of `type`, or the TypedStruct's JSON object.
 */
export type XdsExtension =
  | { readonly type: string; readonly kind: "bytes"; readonly value: Uint8Array; readonly path: string }
  | { readonly type: string; readonly kind: "json"; readonly value: JsonObject; readonly path: string };

const TYPED_STRUCT_TYPES = new Set(["xds.type.v3.TypedStruct", "udpa.type.v1.TypedStruct"]);

/** The full message name of a type URL; reports an empty one (returns undefined) or one without a `/` name part. */
function typeNameOf(typeUrl: string, path: string, errors: ValidationErrors): string | undefined {
  if (typeUrl === "") {
    errors.add(fieldPath(path, "type_url"), "field not present");
    return undefined;
  }
  const slash = typeUrl.lastIndexOf("/");
  if (slash < 0 || slash === typeUrl.length - 1) {
    errors.add(fieldPath(path, "type_url"), `invalid value "${typeUrl}"`);
    return typeUrl;
  }
  return typeUrl.slice(slash + 1);
}

/** Reads a TypedStruct; throws where `fromBinary` throws, or when its Struct has no JSON form (NaN, Infinity). */
function readTypedStruct(bytes: Uint8Array): { typeUrl: string; value: JsonObject } {
  const json = toJson(TypedStructSchema, fromBinary(TypedStructSchema, bytes)) as {
    typeUrl?: string;
    value?: JsonObject;
  };
  return { typeUrl: json.typeUrl ?? "", value: json.value ?? {} };
}

/**
 * gRPC's reading of a typed extension: the Any must be present with a type URL; a TypedStruct is unwrapped into its
 * own type and JSON value. `path` names the Any field; failures in the payload belong under the returned `path`
 * (`<any>.value[<type>]`).
 */
export function extractExtension(
  any: AnyView | undefined,
  path: string,
  errors: ValidationErrors,
): XdsExtension | undefined {
  if (any === undefined) {
    errors.add(path, "field not present");
    return undefined;
  }
  const type = typeNameOf(any.typeUrl, path, errors);
  if (type === undefined) return undefined;
  const valuePath = `${path}.value[${type}]`;
  if (!TYPED_STRUCT_TYPES.has(type)) return { type, kind: "bytes", value: any.value, path: valuePath };
  let typedStruct: { typeUrl: string; value: JsonObject };
  try {
    typedStruct = readTypedStruct(any.value);
  } catch {
    errors.add(valuePath, "could not parse");
    return undefined;
  }
  const innerType = typeNameOf(typedStruct.typeUrl, valuePath, errors);
  if (innerType === undefined) return undefined;
  return {
    type: innerType,
    kind: "json",
    value: deepFreezeJson(typedStruct.value),
    path: `${valuePath}.value[${innerType}]`,
  };
}

/** Reads an extension's serialized payload, or undefined when it is JSON (TypedStruct) or does not parse. */
export function decodeExtension<V>(extension: XdsExtension, reader: ViewReader<V>): V | undefined {
  if (extension.kind !== "bytes") return undefined;
  try {
    return readView(reader, extension.value);
  } catch {
    return undefined;
  }
}

/**
 * An extension config as updates carry it: its message type and either the serialized message (`bytes`; typed
 * arrays cannot be frozen, so treat it as read-only) or a TypedStruct's JSON (`json`, frozen).
 */
export type TypedConfig =
  | { readonly type: string; readonly kind: "bytes"; readonly value: Uint8Array }
  | { readonly type: string; readonly kind: "json"; readonly value: JsonObject };

export function toTypedConfig(extension: XdsExtension): TypedConfig {
  // A copy: the update outlives the response its bytes came in, which a view would keep whole.
  return extension.kind === "bytes"
    ? Object.freeze({ type: extension.type, kind: "bytes", value: extension.value.slice() })
    : Object.freeze({ type: extension.type, kind: "json", value: extension.value });
}
