// A resource's value in etcd: the message in proto binary, or in proto JSON (a value whose first byte is `{`; a
// binary message never starts with that byte for the types served here, since 0x7B would open field 15 as a group).
// The key says the type; a JSON value may carry `@type`, which must agree.
import {
  type DescMessage,
  fromBinary,
  fromJson,
  type JsonValue,
  type Message,
  type Registry,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import type { ResourceKey } from "./resource-key.js";
import { TYPE_URL_PREFIX } from "./resource-key.js";

export type ValueFormat = "binary" | "json";

export type DecodedValue =
  | {
      readonly ok: true;
      readonly message: Message;
      readonly schema: DescMessage;
      /**
       * The message in proto binary, as it is served: a binary value's own bytes (copied out of the etcd response,
       * so that it does not hold the response), a JSON value encoded.
       */
      readonly bytes: Uint8Array;
    }
  | { readonly ok: false; readonly error: string };

const OPEN_BRACE = 0x7b;
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The schema of a key's type, if the registry knows it. */
export function schemaOf(registry: Registry, typeUrl: string): DescMessage | undefined {
  return registry.getMessage(typeUrl.slice(TYPE_URL_PREFIX.length));
}

/** The name a message carries: `cluster_name` for endpoints, a string `name` field otherwise. */
export function messageName(message: Message): string | undefined {
  if (message.$typeName === "envoy.config.endpoint.v3.ClusterLoadAssignment") {
    return (message as unknown as { clusterName: string }).clusterName;
  }
  const name = (message as unknown as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

/** Decodes a value for `key`; never throws. A message whose own name differs from the key's is refused. */
export function decodeValue(registry: Registry, key: ResourceKey, value: Uint8Array): DecodedValue {
  const schema = schemaOf(registry, key.typeUrl);
  if (!schema) return { ok: false, error: `unknown type ${key.typeUrl}` };
  let message: Message;
  let bytes: Uint8Array;
  try {
    if (value[0] === OPEN_BRACE) {
      const json = JSON.parse(decoder.decode(value)) as JsonValue;
      if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error("not a JSON object");
      const { "@type": type, ...fields } = json as Record<string, JsonValue>;
      if (type !== undefined && type !== key.typeUrl) throw new Error(`"@type" ${String(type)} is not the key's type`);
      message = fromJson(schema, fields, { registry });
      bytes = toBinary(schema, message);
    } else {
      message = fromBinary(schema, value);
      bytes = value.slice();
    }
  } catch (error) {
    return { ok: false, error: `does not decode as ${schema.typeName}: ${(error as Error).message}` };
  }
  const own = messageName(message);
  if (own !== undefined && own !== key.name) {
    return { ok: false, error: `the message is named "${own}", the key "${key.name}"` };
  }
  return { ok: true, message, schema, bytes };
}

/** A message as a value: proto binary (the default), or proto JSON with `@type`. */
export function encodeValue(
  registry: Registry,
  schema: DescMessage,
  message: Message,
  format: ValueFormat,
): Uint8Array {
  if (format === "binary") return toBinary(schema, message);
  const json = JSON.parse(toJsonString(schema, message, { registry })) as Record<string, JsonValue>;
  return Buffer.from(JSON.stringify({ "@type": `${TYPE_URL_PREFIX}${schema.typeName}`, ...json }));
}
