// One raw ADS client shape over both protocols for the variant tests: subscriptions by name or by locator with
// dynamic parameters, and responses read as short labels (`c{env=prod}:p1`: name, constraints, a marker from the
// resource), so one test body asserts the same thing over SotW and delta.
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { canonicalText, fromProto } from "@xdskit/constraint-matcher";
import { xdsRegistry } from "@xdskit/protos";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { DynamicParameterConstraintsMap } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { ClusterLoadAssignment } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import {
  type DeltaDiscoveryResponse,
  type DiscoveryResponse,
  type Resource,
  type ResourceName,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DeltaTestStream, Harness, SotwTestStream } from "./ads-client.js";

export type Protocol = "sotw" | "delta";

export interface Locator {
  readonly name: string;
  readonly params?: Readonly<Record<string, string>>;
}

/** A response as labels. */
export interface Seen {
  readonly nonce: string;
  /** `name{constraints}:marker`, or `name:marker` for an unconstrained resource. */
  readonly resources: string[];
  /** Delta: `name` (removed_resources) and `name{constraints}` (removed_resource_names). */
  readonly removed: string[];
  /** `name{constraints}:code`. */
  readonly errors: string[];
  /** Resources sent with `cache_control.do_not_cache`, by label. */
  readonly doNotCache: string[];
  readonly raw: DiscoveryResponse | DeltaDiscoveryResponse;
}

export interface VariantClient {
  /** SotW: the stream's whole subscription of the type; delta: these are subscribed (and `remove` unsubscribed). */
  subscribe(typeUrl: string, add: readonly Locator[], remove?: readonly Locator[]): Promise<void>;
  next(timeoutMs?: number): Promise<Seen>;
  /** ACKs a response (SotW: repeating the current subscription). */
  ack(seen: Seen): Promise<void>;
  none(ms?: number): Promise<void>;
}

function labelOf(resourceName: ResourceName | undefined, name: string): string {
  const constraints = resourceName?.dynamicParameterConstraints;
  const text = constraints ? `{${canonicalText(fromProto(constraints))}}` : "";
  return `${resourceName?.name ?? name}${text}`;
}

/**
 * What tells two versions of a resource apart in the tests: a cluster's EDS service name, an assignment's first
 * port, a DPDS resource's `type=constraints` list.
 */
function markerOf(any: Any | undefined): string {
  const message = any && anyUnpack(any, xdsRegistry);
  if (message?.$typeName === "envoy.config.cluster.v3.Cluster")
    return (message as Cluster).edsClusterConfig?.serviceName ?? "";
  if (message?.$typeName === "envoy.config.endpoint.v3.ClusterLoadAssignment") {
    const address = (message as ClusterLoadAssignment).endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    const socket = address?.case === "endpoint" ? address.value.address?.address : undefined;
    return socket?.case === "socketAddress" ? String(socket.value.portSpecifier.value) : "?";
  }
  if (message?.$typeName === "envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap") {
    const map = (message as DynamicParameterConstraintsMap).resourceTypeConstraints;
    return Object.keys(map)
      .sort()
      .map((type) => `${type}=${canonicalText(fromProto(map[type]))}`)
      .join(";");
  }
  return message?.$typeName ?? "?";
}

function readResource(resource: Resource, seen: { resources: string[]; doNotCache: string[] }): void {
  const label = `${labelOf(resource.resourceName, resource.name)}:${markerOf(resource.resource)}`;
  seen.resources.push(label);
  if (resource.cacheControl?.doNotCache) seen.doNotCache.push(label);
}

function errorsOf(response: DiscoveryResponse | DeltaDiscoveryResponse): string[] {
  return response.resourceErrors.map((e) => `${labelOf(e.resourceName, "")}:${e.errorDetail?.code ?? 0}`);
}

function readSotw(response: DiscoveryResponse): Seen {
  const seen = { resources: [] as string[], doNotCache: [] as string[] };
  for (const any of response.resources) {
    if (any.typeUrl === `type.googleapis.com/${ResourceSchema.typeName}`) {
      readResource(anyUnpack(any, ResourceSchema) as Resource, seen);
    } else {
      const message = anyUnpack(any, xdsRegistry) as { name?: string; clusterName?: string } | undefined;
      seen.resources.push(`${message?.clusterName ?? message?.name ?? "?"}:${markerOf(any)}`);
    }
  }
  return { nonce: response.nonce, ...seen, removed: [], errors: errorsOf(response), raw: response };
}

function readDelta(response: DeltaDiscoveryResponse): Seen {
  const seen = { resources: [] as string[], doNotCache: [] as string[] };
  for (const resource of response.resources) readResource(resource, seen);
  const removed = [...response.removedResources, ...response.removedResourceNames.map((r) => labelOf(r, r.name))];
  return { nonce: response.nonce, ...seen, removed, errors: errorsOf(response), raw: response };
}

const key = (l: Locator) => JSON.stringify([l.name, Object.entries(l.params ?? {}).sort()]);

export function variantClient(h: Harness, protocol: Protocol, nodeId = "n"): VariantClient {
  if (protocol === "sotw") {
    const s: SotwTestStream = h.sotw();
    const subscribed = new Map<string, Map<string, Locator>>();
    let first = true;
    const request = (typeUrl: string, extra: { versionInfo?: string; responseNonce?: string } = {}) => {
      const locators = [...(subscribed.get(typeUrl)?.values() ?? [])];
      const plain = locators.filter((l) => Object.keys(l.params ?? {}).length === 0).map((l) => l.name);
      const withParams = locators
        .filter((l) => Object.keys(l.params ?? {}).length > 0)
        .map((l) => ({ name: l.name, dynamicParameters: { ...l.params } }));
      const node = first ? { node: { id: nodeId } } : {};
      first = false;
      return s.send({ ...node, typeUrl, resourceNames: plain, resourceLocators: withParams, ...extra });
    };
    const lastOf = new Map<string, { versionInfo: string; responseNonce: string }>();
    return {
      async subscribe(typeUrl, add, remove = []) {
        const current = subscribed.get(typeUrl) ?? new Map<string, Locator>();
        subscribed.set(typeUrl, current);
        for (const l of add) current.set(key(l), l);
        for (const l of remove) current.delete(key(l));
        await request(typeUrl, lastOf.get(typeUrl));
      },
      async next(timeoutMs) {
        const response = await s.next(timeoutMs);
        return readSotw(response);
      },
      async ack(seen) {
        const response = seen.raw as DiscoveryResponse;
        const last = { versionInfo: response.versionInfo, responseNonce: response.nonce };
        lastOf.set(response.typeUrl, last);
        await request(response.typeUrl, last);
      },
      none: (ms) => s.none(ms),
    };
  }
  const d: DeltaTestStream = h.delta();
  let first = true;
  const split = (locators: readonly Locator[]) => ({
    names: locators.filter((l) => Object.keys(l.params ?? {}).length === 0).map((l) => l.name),
    locators: locators
      .filter((l) => Object.keys(l.params ?? {}).length > 0)
      .map((l) => ({ name: l.name, dynamicParameters: { ...l.params } })),
  });
  return {
    async subscribe(typeUrl, add, remove = []) {
      const a = split(add);
      const r = split(remove);
      const node = first ? { node: { id: nodeId } } : {};
      first = false;
      await d.send({
        ...node,
        typeUrl,
        resourceNamesSubscribe: a.names,
        resourceLocatorsSubscribe: a.locators,
        resourceNamesUnsubscribe: r.names,
        resourceLocatorsUnsubscribe: r.locators,
      });
    },
    async next(timeoutMs) {
      return readDelta(await d.next(timeoutMs));
    },
    async ack(seen) {
      await d.send({ typeUrl: seen.raw.typeUrl, responseNonce: seen.nonce });
    },
    none: (ms) => d.none(ms),
  };
}
