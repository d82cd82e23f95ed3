// Where a resource file's JSON does not fit its proto message: @bufbuild/protobuf's fromJson names an unknown key
// but not where it sits, so this walks the JSON beside the message schema and gives the key's path inside the
// resource (`endpoints[0].lbEndpoint`) and the field names it is close to (`lbEndpoints`).
import type { DescField, DescMessage, Registry } from "@bufbuild/protobuf";
import { closeNames } from "./args-errors.js";

/** Messages whose JSON form is not an object of fields (`"5s"`, any JSON, `{"value": ...}`): not walked. */
const OPAQUE_JSON = new Set([
  "google.protobuf.Duration",
  "google.protobuf.Timestamp",
  "google.protobuf.FieldMask",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.NullValue",
  "google.protobuf.Empty",
]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function fieldOf(desc: DescMessage, key: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === key || f.name === key);
}

/** `path.key`, or `key` at the top. */
const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/**
 * The first key of a resource as written (`{"@type": ..., fields}`) that its message has no field for, as
 * `path: unknown field "key" in <message>` with a "did you mean" when a field name is close; undefined when every
 * key is known (the JSON may still be wrong in another way, which fromJson's own message then tells).
 */
export function unknownFieldProblem(json: unknown, registry: Registry): string | undefined {
  return isObject(json) ? walkAny(json, "", registry) : undefined;
}

/** Wrappers (`google.protobuf.UInt32Value`...) are written as their bare value. */
const isWrapper = (typeName: string) => typeName.startsWith("google.protobuf.") && typeName.endsWith("Value");

function walk(desc: DescMessage, json: unknown, path: string, registry: Registry): string | undefined {
  if (OPAQUE_JSON.has(desc.typeName) || isWrapper(desc.typeName) || !isObject(json)) return undefined;
  if (desc.typeName === "google.protobuf.Any") return walkAny(json, path, registry);
  for (const [key, value] of Object.entries(json)) {
    const field = fieldOf(desc, key);
    if (!field) {
      const names = desc.fields.map((f) => f.jsonName);
      const close = closeNames(key, names);
      const hint = close.length > 0 ? ` (did you mean ${close.map((n) => `"${n}"`).join(" or ")}?)` : "";
      return `${join(path, key)}: unknown field "${key}" in ${desc.typeName}${hint}`;
    }
    const found = walkField(field, value, join(path, key), registry);
    if (found) return found;
  }
  return undefined;
}

function walkField(field: DescField, value: unknown, path: string, registry: Registry): string | undefined {
  switch (field.fieldKind) {
    case "message":
      return walk(field.message, value, path, registry);
    case "list":
      if (field.listKind !== "message" || !Array.isArray(value)) return undefined;
      for (let i = 0; i < value.length; i++) {
        const found = walk(field.message, value[i], `${path}[${i}]`, registry);
        if (found) return found;
      }
      return undefined;
    case "map":
      if (field.mapKind !== "message" || !isObject(value)) return undefined;
      for (const [key, item] of Object.entries(value)) {
        const found = walk(field.message, item, `${path}["${key}"]`, registry);
        if (found) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

/** An Any's JSON: `@type` names the message whose fields sit beside it. */
function walkAny(json: Record<string, unknown>, path: string, registry: Registry): string | undefined {
  const typeUrl = json["@type"];
  if (typeof typeUrl !== "string") return undefined;
  const inner = registry.getMessage(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));
  if (!inner) return undefined;
  // A well-known type inside an Any keeps its own JSON under "value".
  if (inner.typeName.startsWith("google.protobuf.")) return undefined;
  const { "@type": _type, ...fields } = json;
  return walk(inner, fields, path, registry);
}
