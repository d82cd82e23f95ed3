import { type DescMessage, type Message, type Registry, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { DPDS_TYPE_URL } from "../type-urls.js";
import type { VariantRef } from "./entry.js";
import { type ConstraintsInput, readConstraints, variantRef } from "./variant-group.js";

/**
 * A resource to serve: any protobuf-es message. A `google.protobuf.Any` is taken as already packed and sent as is
 * (useful for resources a client must reject); it needs an explicit `name`.
 */
export type ResourceMessage = Message;

export interface ResourceOptions {
  /**
   * The resource name. Defaults to the message's own name: `name` for Listener, RouteConfiguration and Cluster,
   * `cluster_name` for ClusterLoadAssignment, a string `name` field for other messages.
   */
  readonly name?: string;
  /**
   * The type the resource is served under. Defaults to the message's own type URL. Setting another one serves a
   * resource of the wrong type (its Any keeps the real type URL), for testing clients.
   */
  readonly typeUrl?: string;
  /** Wrap the resource in `envoy.service.discovery.v3.Resource` (overrides the server's `wrapResources`). */
  readonly wrap?: boolean;
  /** Publish a new version even if the resource is byte-for-byte the one already served. */
  readonly force?: boolean;
  /** The message's schema, when it is not in `@xdskit/protos` nor in the server's `typeRegistry`. */
  readonly schema?: DescMessage;
  /**
   * TP2: publish this as the variant of its name with these constraints (without: the unconstrained variant). A
   * subscription gets the most specific variant its dynamic parameters match; variants are sent wrapped in
   * `Resource` with `resource_name { name, dynamic_parameter_constraints }`. Variants of one name must not overlap
   * (OverlappingVariantsError) unless `allowOverlap` says otherwise.
   */
  readonly constraints?: ConstraintsInput;
  /** This variant may overlap the other variants of its name: the most specific match is served. */
  readonly allowOverlap?: boolean;
  /**
   * Send the resource wrapped in `Resource` with `cache_control.do_not_cache`, so caching proxies pass it on
   * without keeping it. Always so for the DPDS resource type.
   */
  readonly doNotCache?: boolean;
}

/** A resource plus its options, for the calls that take many resources. */
export interface ResourceInput extends ResourceOptions {
  readonly resource: ResourceMessage;
}

/** A resource ready to store: packed, named, its variant read. */
export interface PreparedResource {
  readonly typeUrl: string;
  readonly name: string;
  readonly schema: DescMessage | undefined;
  readonly any: Any;
  readonly wrap: boolean | undefined;
  readonly force: boolean;
  readonly variant: VariantRef | undefined;
  readonly allowOverlap: boolean;
  readonly doNotCache: boolean;
}

const ANY_TYPE_NAME = "google.protobuf.Any";

const typeUrls = new Map<string, string>();

/**
 * `message` packed in an Any, as `anyPack` packs it, but lighter to hold (a server holds one per resource): one type
 * URL string per type rather than one per resource, and the Any built as the plain object protobuf-es makes of a
 * proto3 message, its three fields in the object itself (`create` adds the two field values out of line).
 */
function pack(schema: DescMessage, message: Message): Any {
  let typeUrl = typeUrls.get(message.$typeName);
  if (typeUrl === undefined) {
    typeUrl = `type.googleapis.com/${message.$typeName}`;
    typeUrls.set(message.$typeName, typeUrl);
  }
  return { $typeName: AnySchema.typeName, typeUrl, value: toBinary(schema, message) };
}

function defaultName(message: ResourceMessage): string | undefined {
  if (message.$typeName === "envoy.config.endpoint.v3.ClusterLoadAssignment") {
    return (message as unknown as { clusterName: string }).clusterName;
  }
  const name = (message as unknown as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

/** Packs and names one resource; a TypeError for what cannot be served. */
export function prepareResource(
  registry: Registry,
  message: ResourceMessage,
  options: ResourceOptions,
): PreparedResource {
  let any: Any;
  let schema: DescMessage | undefined;
  if (message.$typeName === ANY_TYPE_NAME) {
    any = message as Any;
    if (options.name === undefined) throw new TypeError("a resource given as google.protobuf.Any needs options.name");
  } else {
    schema = options.schema ?? registry.getMessage(message.$typeName);
    if (!schema) {
      throw new TypeError(`unknown message type ${message.$typeName}: pass options.schema or a server typeRegistry`);
    }
    any = pack(schema, message);
  }
  const name = options.name ?? defaultName(message);
  if (name === undefined || name === "") {
    throw new TypeError(`resource of type ${message.$typeName} has no name: set its name field or options.name`);
  }
  const typeUrl = options.typeUrl ?? any.typeUrl;
  if (typeUrl === "") throw new TypeError(`resource ${name} has no type URL`);
  const constraints = readConstraints(options.constraints, `resource ${name} of type ${typeUrl}`);
  return {
    typeUrl,
    name,
    schema,
    any,
    wrap: options.wrap,
    force: options.force ?? false,
    variant: variantRef(name, constraints),
    allowOverlap: options.allowOverlap ?? false,
    doNotCache: (options.doNotCache ?? false) || typeUrl === DPDS_TYPE_URL,
  };
}

/** Prepares many resources; the same variant twice in one call is a TypeError. */
export function prepareResources(
  registry: Registry,
  resources: Iterable<ResourceMessage | ResourceInput>,
): PreparedResource[] {
  const out: PreparedResource[] = [];
  const seen = new Set<string>();
  for (const item of resources) {
    const prepared =
      "$typeName" in item ? prepareResource(registry, item, {}) : prepareResource(registry, item.resource, item);
    const key = JSON.stringify([prepared.typeUrl, prepared.name, prepared.variant?.text ?? ""]);
    if (seen.has(key)) {
      const what = prepared.variant ? ` with constraints ${prepared.variant.text}` : "";
      throw new TypeError(`duplicate resource ${prepared.name}${what} of type ${prepared.typeUrl}`);
    }
    seen.add(key);
    out.push(prepared);
  }
  return out;
}
