// Protobuf messages as JSON for people and scripts, with every xDS type this toolkit knows.
import { type Message, toJsonString } from "@bufbuild/protobuf";
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { xdsRegistry } from "@xdskit/protos";

/**
 * A message as proto JSON (Any fields expanded with `@type`). When it holds a type xdskit does not know, the JSON
 * names the type and the problem instead of failing.
 */
export function messageToJson(message: Message, indent = 0): string {
  const schema = xdsRegistry.getMessage(message.$typeName);
  try {
    if (schema) return toJsonString(schema, message, { registry: xdsRegistry, prettySpaces: indent });
  } catch (error) {
    return JSON.stringify({ "@type": message.$typeName, error: (error as Error).message }, null, indent);
  }
  return JSON.stringify({ "@type": message.$typeName, error: "type not known to xdskit" }, null, indent);
}

/** An Any's message, or undefined when its type is not known or its bytes do not decode. */
export function unpackAny(any: Any): Message | undefined {
  try {
    return anyUnpack(any, xdsRegistry);
  } catch {
    return undefined;
  }
}
