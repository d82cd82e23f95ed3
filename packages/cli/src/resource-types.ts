// The resource types the CLI takes on its command line: lds, rds, cds, eds (validated as a gRPC client validates
// them), or any type URL or message name xdskit knows (decoded as is, named by its `name` field).
import type { Message } from "@bufbuild/protobuf";
import { typeNameOfUrl, xdsRegistry } from "@xdskit/protos";
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  type ResourceType,
  routeConfigurationResourceType,
} from "@xdskit/xds-client";
import { UsageError } from "./command.js";
import { unpackAny } from "./proto-json.js";

const SHORT_TYPES: Readonly<Record<string, ResourceType<unknown>>> = {
  lds: listenerResourceType,
  rds: routeConfigurationResourceType,
  cds: clusterResourceType,
  eds: endpointResourceType,
};

/** Any message type of the registry, decoded as is; its `name` field names the resource. */
function genericResourceType(typeUrl: string): ResourceType<Message> {
  return {
    typeUrl,
    typeName: typeNameOfUrl(typeUrl),
    allResourcesRequiredInSotW: false,
    decode(any) {
      const message = unpackAny(any);
      if (!message) return { ok: false, error: `cannot decode ${any.typeUrl}` };
      const name = (message as { name?: unknown }).name;
      if (typeof name !== "string" || name === "") return { ok: false, error: "no name field" };
      return { ok: true, name, value: message };
    },
  };
}

export function resolveResourceType(text: string): ResourceType<unknown> {
  const short = SHORT_TYPES[text.toLowerCase()];
  if (short) return short;
  const typeName = typeNameOfUrl(text);
  const known = Object.values(SHORT_TYPES).find((type) => typeNameOfUrl(type.typeUrl) === typeName);
  if (known) return known;
  if (!xdsRegistry.getMessage(typeName)) {
    throw new UsageError(`unknown resource type "${text}": use lds, rds, cds, eds or a type URL known to xdskit`);
  }
  return genericResourceType(`type.googleapis.com/${typeName}`) as ResourceType<unknown>;
}

/** The decoded proto message behind an update: the four built-in types keep it as `raw`. */
export function messageOf(value: unknown): Message {
  return ((value as { raw?: Message }).raw ?? value) as Message;
}
