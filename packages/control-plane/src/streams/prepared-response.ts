import { create, type Message, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponse,
  type DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  type DiscoveryResponseSchema,
  type Resource,
  type ResourceError,
  ResourceErrorSchema,
  ResourceNameSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { ErrorEntry, ResourceEntry, VariantRef } from "../resources/entry.js";
import {
  type EncodedBody,
  encodeBody,
  encodeResourceParts,
  type PlainResourceParts,
  type ResponseResource,
  resourceTrailer,
} from "./encoded-response.js";

/** What a response says, short of the nonce: the message and the names its hook event lists. */
export interface ResponseParts {
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly resourceNames: readonly string[];
  readonly errorNames: readonly string[];
  /** Delta only: `removed_resources`. */
  readonly removedNames: readonly string[];
  /** The response (its nonce empty unless injected), as hooks report it. */
  readonly message: DiscoveryResponse | DeltaDiscoveryResponse;
}

/**
 * A response built once for every stream that sends it: its bytes made on first use, the message only if a hook
 * reads it. The bulk of the bytes (the head, with the resources) is held weakly: the writes of a fan-out keep it
 * alive while they wait for the connections, and a stream that comes after they are all gone encodes it again. An
 * idle server keeps no encoded responses.
 */
export interface PreparedResponse extends ResponseParts {
  readonly body: EncodedBody;
}

type ResponseSchema = typeof DiscoveryResponseSchema | typeof DeltaDiscoveryResponseSchema;

/** A response's resources: as they are written (encoded-response.ts), and as messages for the hooks. */
export interface PreparedResources {
  readonly wire: readonly ResponseResource[];
  messages(): Message[];
}

/** `envelope`: the response without its resources (nor nonce). */
export function prepareResponse<S extends ResponseSchema>(
  schema: S,
  parts: Omit<ResponseParts, "message">,
  envelope: MessageShape<S>,
  resources: PreparedResources,
): PreparedResponse {
  let message: MessageShape<S> | undefined;
  let head: WeakRef<Uint8Array> | undefined;
  let tail: Uint8Array | undefined;
  return {
    ...parts,
    get message() {
      message ??= { ...envelope, resources: resources.messages() } as MessageShape<S>;
      return message;
    },
    get body() {
      const bytes = head?.deref();
      if (bytes && tail) return { head: bytes, tail };
      const encoded = encodeBody(schema, envelope, resources.wire);
      head = new WeakRef(encoded.head);
      tail = encoded.tail;
      return encoded;
    },
  };
}

/** TP3 errors as both responses carry them: a variant's with its constraints. */
export function toResourceErrors(errors: readonly ErrorEntry[]): ResourceError[] {
  return errors.map((e) =>
    create(ResourceErrorSchema, { resourceName: e.variant?.resourceName ?? { name: e.name }, errorDetail: e.status }),
  );
}

const wrappedAnys = new WeakMap<ResourceEntry, Any>();
const deltaResources = new WeakMap<ResourceEntry, Resource>();
const wrappedPartsOf = new WeakMap<ResourceEntry, PlainResourceParts>();
/** A variant's `resource_name`, encoded: once per variant, which all its versions share. */
const resourceNameBytes = new WeakMap<VariantRef, Uint8Array>();
const RESOURCE_TYPE_URL = `type.googleapis.com/${ResourceSchema.typeName}`;

/**
 * The entry wrapped in `Resource`, by its parts: the `Resource` message `resourceFor` builds, without building it or
 * encoding it by reflection (a variant's change would otherwise pay for both, on code a change runs once in a while).
 * One per entry, for SotW's Any and delta's responses alike.
 */
export function wrappedParts(entry: ResourceEntry): PlainResourceParts {
  let parts = wrappedPartsOf.get(entry);
  if (!parts) {
    parts = partsOf(entry);
    wrappedPartsOf.set(entry, parts);
  }
  return parts;
}

function partsOf(entry: ResourceEntry): PlainResourceParts {
  let resourceName: Uint8Array | undefined;
  if (entry.variant) {
    resourceName = resourceNameBytes.get(entry.variant);
    if (!resourceName) {
      resourceName = toBinary(ResourceNameSchema, entry.variant.resourceName);
      resourceNameBytes.set(entry.variant, resourceName);
    }
  }
  return {
    name: entry.variant ? "" : entry.name,
    version: entry.version,
    any: entry.any,
    trailer: resourceTrailer(entry.doNotCache, resourceName),
  };
}

/**
 * The Any to put in a SotW response: the packed message, or it wrapped in `Resource`, as a variant (which must name
 * its constraints) and a resource marked do-not-cache always are. One per entry.
 */
export function anyFor(entry: ResourceEntry, wrapResources: boolean): Any {
  if (!(entry.variant !== undefined || entry.doNotCache || (entry.wrap ?? wrapResources))) return entry.any;
  let wrapped = wrappedAnys.get(entry);
  if (!wrapped) {
    const value = encodeResourceParts(wrappedParts(entry));
    wrapped = value
      ? create(AnySchema, { typeUrl: RESOURCE_TYPE_URL, value })
      : anyPack(ResourceSchema, resourceFor(entry));
    wrappedAnys.set(entry, wrapped);
  }
  return wrapped;
}

/** A delta response's resource as written: by its parts (no message built), wrapped ones with their trailer. */
export function deltaWireResource(entry: ResourceEntry): ResponseResource {
  return entry.variant === undefined && !entry.doNotCache ? entry : wrappedParts(entry);
}

/**
 * The entry wrapped in `Resource` (delta, and wrapped SotW resources): with its name, or for a variant its
 * `resource_name` (only one of the two may be set), its version, and `cache_control` when not to be cached. One per
 * entry.
 */
export function resourceFor(entry: ResourceEntry): Resource {
  let resource = deltaResources.get(entry);
  if (!resource) {
    resource = create(ResourceSchema, {
      ...(entry.variant ? { resourceName: entry.variant.resourceName } : { name: entry.name }),
      version: String(entry.version),
      resource: entry.any,
      ...(entry.doNotCache ? { cacheControl: { doNotCache: true } } : {}),
    });
    deltaResources.set(entry, resource);
  }
  return resource;
}
