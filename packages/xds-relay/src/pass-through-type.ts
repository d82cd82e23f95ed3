import { type DescMessage, type Registry, ScalarType } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Any } from "@bufbuild/protobuf/wkt";
import type { ResourceName } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DecodeResult, ResourceType } from "@xdskit/xds-client";

/**
 * A resource as the relay passes it on: the bytes the upstream sent, never decoded, with what its `Resource` wrapper
 * said about it (docs/decisions.md#relay-cache).
 */
export interface PassedResource {
  /** The resource itself (the wrapper removed), as received. */
  readonly any: Any;
  /** The wrapper's `resource_name`: the variant's name and constraints, exactly as the upstream sent them. */
  readonly resourceName: ResourceName | undefined;
  /** The wrapper's `cache_control.do_not_cache`. */
  readonly doNotCache: boolean;
  /** Its message has no name of its own (a DPDS resource): it is named by its wrapper, downstream too. */
  readonly nameless: boolean;
}

/**
 * A resource type whose decoder keeps the resource as received: the relay neither validates nor rebuilds what it
 * relays (its downstream clients validate, and NACK to the relay). A resource that came without a wrapper naming it
 * (a bare SotW resource) is named by its message's `name` field (`cluster_name` for a ClusterLoadAssignment), read
 * straight from the bytes; a message of a type the registry does not know must come wrapped with a name.
 */
export function passThroughType(
  typeUrl: string,
  allResourcesRequiredInSotW: boolean,
  registry: Registry,
): ResourceType<PassedResource> {
  const typeName = typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
  let nameField: number | undefined | null = null;
  return {
    typeUrl,
    typeName,
    allResourcesRequiredInSotW,
    decode(any, context): DecodeResult<PassedResource> {
      const wrapper = context.wrapper;
      nameField ??= nameFieldOf(registry.getMessage(typeName));
      const value: PassedResource = {
        any,
        resourceName: wrapper?.resourceName,
        doNotCache: wrapper?.cacheControl?.doNotCache ?? false,
        nameless: nameField === undefined,
      };
      const named = wrapper?.resourceName?.name || wrapper?.name;
      if (named) return { ok: true, name: named, value };
      if (nameField === undefined) {
        return {
          ok: false,
          error: `a ${typeName} must come wrapped in a Resource with its name: the relay cannot read its name`,
        };
      }
      const name = readStringField(any.value, nameField);
      if (name === undefined) return { ok: false, error: `the ${typeName} has no name` };
      return { ok: true, name, value };
    },
  };
}

/** The number of a message's string field `name` (`cluster_name` when it has none), if any. */
function nameFieldOf(schema: DescMessage | undefined): number | undefined {
  for (const localName of ["name", "clusterName"]) {
    const field = schema?.fields.find((f) => f.localName === localName);
    if (field?.fieldKind === "scalar" && field.scalar === ScalarType.STRING) return field.number;
  }
  return undefined;
}

/** The last value of a string field (proto3: the last one wins), or undefined when absent or unreadable. */
function readStringField(bytes: Uint8Array, field: number): string | undefined {
  try {
    const reader = new BinaryReader(bytes);
    let found: string | undefined;
    while (reader.pos < reader.len) {
      const [number, wireType] = reader.tag();
      if (number === field && wireType === WireType.LengthDelimited) found = reader.string();
      else reader.skip(wireType, number);
    }
    return found || undefined;
  } catch {
    return undefined;
  }
}
