import type { Any } from "@bufbuild/protobuf/wkt";
import type { LbEndpoint } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_components_pb";
import type { AddressView } from "../gen/envoy/config/core/v3/address_view.js";
import type {
  LbEndpointView,
  LocalityLbEndpointsView,
} from "../gen/envoy/config/endpoint/v3/endpoint_components_view.js";
import {
  type ClusterLoadAssignmentView,
  ClusterLoadAssignmentViewReader,
} from "../gen/envoy/config/endpoint/v3/endpoint_view.js";
import { canonicalIp, ipv4Value, joinHostPort } from "../shared/ip-address.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";
import { decodeResource, type PlainReader, type ResourceMessage } from "./decode-view.js";
import { hashKeyFromMetadata } from "./endpoint-hash-key.js";
import { readPlainClusterLoadAssignment } from "./endpoint-plain.js";
import {
  addLocalityName,
  type DropOverload,
  type Endpoint,
  type EndpointAddress,
  type EndpointUpdate,
  HEALTH_STATUS_NAMES,
  type LocalityGroup,
  localityName,
  type Priority,
} from "./endpoint-types.js";
import { perMillion } from "./fraction.js";
import { appendTo, EMPTY, keptAppended, UINT32_MAX, type ValidationErrors } from "./validation.js";

/**
 * Duplicate-detection key of the address `readAddress` last returned (one decode runs at a time, synchronously):
 * `ip * 65536 + port` for IPv4 (exact in a double), the canonical `[ip]:port` text for IPv6.
 */
let lastKey: number | string = 0;

function addressPath(locality: number, endpoint: number, additional: number): string {
  const base = `endpoints[${locality}].lb_endpoints[${endpoint}].endpoint`;
  return additional < 0 ? `${base}.address` : `${base}.additional_addresses[${additional}].address`;
}

/** gRPC's ParseXdsAddress: a socket address with a numeric IP and a port below 65536. */
function readAddress(
  address: AddressView | undefined,
  locality: number,
  endpoint: number,
  additional: number,
  errors: ValidationErrors,
): EndpointAddress | undefined {
  if (address === undefined) {
    errors.add(addressPath(locality, endpoint, additional), "field not present");
    return undefined;
  }
  if (address.address.case !== "socketAddress") {
    errors.add(`${addressPath(locality, endpoint, additional)}.socket_address`, "field not present");
    return undefined;
  }
  const socketAddress = address.address.value;
  const port = socketAddress.portSpecifier.case === "portValue" ? socketAddress.portSpecifier.value : 0;
  if (port > 65535) {
    errors.add(`${addressPath(locality, endpoint, additional)}.socket_address.port_value`, "invalid port");
    return undefined;
  }
  const text = socketAddress.address;
  if (text.indexOf(":") < 0) {
    const ip = ipv4Value(text, 0, text.length);
    if (ip >= 0) {
      lastKey = ip * 65536 + port;
      return Object.freeze({ address: text, port });
    }
  } else {
    const canonical = canonicalIp(text);
    if (canonical !== undefined) {
      lastKey = joinHostPort(canonical, port);
      return Object.freeze({ address: text, port });
    }
  }
  errors.add(
    `${addressPath(locality, endpoint, additional)}.socket_address`,
    `address "${text}" is not a valid IPv4 or IPv6 address`,
  );
  return undefined;
}

/**
 * Parses one locality's endpoints, recording every address in `seen` (see `lastKey`) and reporting duplicates;
 * returns them as the update keeps them. The lists a decode builds (here and below) are made by their first item
 * (`appendTo`): a decode of an EDS resource of one endpoint makes only the lists its update keeps.
 */
function parseLbEndpoints(
  proto: LocalityLbEndpointsView,
  index: number,
  seen: KeySet<number | string>,
  errors: ValidationErrors,
): readonly Endpoint[] {
  let out: Endpoint[] | undefined;
  const lbEndpoints = proto.lbEndpoints;
  for (let j = 0; j < lbEndpoints.length; j++) {
    const lbEndpoint = lbEndpoints[j]!;
    const healthStatus = HEALTH_STATUS_NAMES[lbEndpoint.healthStatus];
    if (healthStatus === undefined) continue;
    const weight = lbEndpoint.loadBalancingWeight ?? 1;
    if (weight === 0) {
      errors.add(`endpoints[${index}].lb_endpoints[${j}].load_balancing_weight`, "must be greater than 0");
    }
    if (lbEndpoint.hostIdentifier.case !== "endpoint") {
      errors.add(`endpoints[${index}].lb_endpoints[${j}].endpoint`, "field not present");
      continue;
    }
    const endpoint = lbEndpoint.hostIdentifier.value;
    const additional = endpoint.additionalAddresses;
    let addresses: EndpointAddress[] | undefined;
    for (let k = -1; k < additional.length; k++) {
      const address = readAddress(k < 0 ? endpoint.address : additional[k]!.address, index, j, k, errors);
      if (address === undefined) continue;
      const key = lastKey;
      if (!addKey(seen, key)) {
        const shown = typeof key === "string" ? key : joinHostPort(address.address, address.port);
        errors.add(`endpoints[${index}].lb_endpoints[${j}]`, `duplicate endpoint address "${shown}"`);
      }
      addresses = appendTo(addresses, address);
    }
    if (addresses === undefined) continue;
    const parsed: Endpoint = Object.freeze({
      addresses: keptAppended(addresses),
      healthStatus,
      weight,
      hostname: endpoint.hostname,
      hashKey: hashKeyOf(lbEndpoint),
    });
    out = appendTo(out, parsed);
  }
  return keptAppended(out);
}

/**
 * A76's hash key: the wire view's (read from the bytes, endpoint-hash-key.ts), or, for a message protobuf-es decoded
 * (the slow path), from its metadata.
 */
function hashKeyOf(lbEndpoint: LbEndpointView): string {
  const fromView = lbEndpoint.hashKey as string | undefined;
  return fromView ?? hashKeyFromMetadata((lbEndpoint as unknown as LbEndpoint).metadata);
}

interface PriorityBuilder extends LocalityGroup {
  readonly priority: number;
  totalWeight: number;
}

/**
 * A set of keys that holds its first key inline and makes a `Set` only for a second: most resources have one
 * locality, and an EDS resource per cluster often one endpoint, where a `Set` per resource would be most of the cost.
 */
interface KeySet<K> {
  first: K | undefined;
  rest: Set<K> | undefined;
}

/** The addresses of the resource being decoded (one decode runs at a time: `parseEndpoints` empties it). */
const seenAddresses: KeySet<number | string> = { first: undefined, rest: undefined };

/** Adds `key`; false when it was already there. */
function addKey<K>(set: KeySet<K>, key: K): boolean {
  if (set.first === undefined) {
    set.first = key;
    return true;
  }
  if (set.first === key) return false;
  if (set.rest === undefined) set.rest = new Set();
  else if (set.rest.has(key)) return false;
  set.rest.add(key);
  return true;
}

/** Builders past this many are found through a map (a resource may hold any number of priorities). */
const SCANNED_PRIORITIES = 8;

const MAX_REPORTED_GAPS = 10;

function parseEndpoints(proto: ClusterLoadAssignmentView, errors: ValidationErrors): readonly Priority[] {
  // In the order met; found by a scan while few, then by `byPriority`.
  let builders: PriorityBuilder[] | undefined;
  let byPriority: Map<number, PriorityBuilder> | undefined;
  const seen = seenAddresses;
  seen.first = undefined;
  seen.rest = undefined;
  const localities = proto.endpoints;
  for (let i = 0; i < localities.length; i++) {
    const locality = localities[i]!;
    // A locality without weight gets no traffic: gRPC skips it entirely.
    const weight = locality.loadBalancingWeight ?? 0;
    if (weight === 0) continue;
    if (locality.locality === undefined) {
      errors.add(`endpoints[${i}].locality`, "field not present");
      continue;
    }
    const before = errors.count;
    const endpoints = parseLbEndpoints(locality, i, seen, errors);
    if (errors.count !== before) continue;
    const { region, zone, subZone } = locality.locality;
    const priority = locality.priority;
    let builder: PriorityBuilder | undefined;
    if (byPriority !== undefined) builder = byPriority.get(priority);
    else if (builders !== undefined) {
      for (let b = 0; b < builders.length; b++) {
        if (builders[b]!.priority === priority) {
          builder = builders[b];
          break;
        }
      }
    }
    if (builder === undefined) {
      builder = { priority, localities: undefined, names: undefined, totalWeight: 0 };
      builders = appendTo(builders, builder);
      if (byPriority !== undefined) byPriority.set(priority, builder);
      else if (builders.length > SCANNED_PRIORITIES) byPriority = new Map(builders.map((b) => [b.priority, b]));
    }
    if (!addLocalityName(builder, region, zone, subZone)) {
      errors.add(
        `endpoints[${i}]`,
        `duplicate locality {region="${region}", zone="${zone}", sub_zone="${subZone}"} found in priority ${priority}`,
      );
      continue;
    }
    builder.totalWeight += weight;
    builder.localities = appendTo(
      builder.localities,
      Object.freeze({ locality: localityName(region, zone, subZone), weight, endpoints }),
    );
  }
  seen.rest = undefined;
  if (builders === undefined) return EMPTY;
  if (builders.length > 1) builders.sort((a, b) => a.priority - b.priority);
  let priorities: Priority[] | undefined;
  let expected = 0;
  let gaps = 0;
  for (let b = 0; b < builders.length; b++) {
    const builder = builders[b]!;
    const { priority } = builder;
    for (; expected < priority && gaps < MAX_REPORTED_GAPS; expected++, gaps++) {
      errors.add("endpoints", `priority ${expected} empty`);
    }
    gaps += priority - expected;
    if (builder.totalWeight > UINT32_MAX) {
      errors.add("endpoints", `sum of locality weights for priority ${priority} exceeds uint32 max`);
    }
    priorities = appendTo(priorities, Object.freeze({ localities: keptAppended(builder.localities) }));
    expected = priority + 1;
  }
  if (gaps > MAX_REPORTED_GAPS) errors.add("endpoints", `${gaps - MAX_REPORTED_GAPS} more empty priorities`);
  return keptAppended(priorities);
}

function parseDropOverloads(proto: ClusterLoadAssignmentView, errors: ValidationErrors): readonly DropOverload[] {
  const overloads = proto.policy?.dropOverloads;
  if (overloads === undefined) return EMPTY;
  let drops: DropOverload[] | undefined;
  for (let i = 0; i < overloads.length; i++) {
    const overload = overloads[i]!;
    const path = `policy.drop_overloads[${i}]`;
    if (overload.category === "") errors.add(`${path}.category`, "empty drop category name");
    const percentage = overload.dropPercentage;
    if (percentage === undefined) {
      errors.add(`${path}.drop_percentage`, "field not present");
      continue;
    }
    const parts = perMillion(
      percentage.numerator,
      percentage.denominator,
      `${path}.drop_percentage.denominator`,
      errors,
    );
    if (parts === undefined) continue;
    drops = appendTo(drops, Object.freeze({ category: overload.category, dropsPerMillion: Math.min(parts, 1000000) }));
  }
  return keptAppended(drops);
}

const CLUSTER_LOAD_ASSIGNMENT: ResourceMessage<ClusterLoadAssignmentView> = {
  typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  label: "ClusterLoadAssignment",
  reader: ClusterLoadAssignmentViewReader,
  nameOf: (view) => view.clusterName,
};

/** The plain EDS reader (endpoint-plain.ts), tried before the views. */
const PLAIN_CLUSTER_LOAD_ASSIGNMENT: PlainReader<Omit<EndpointUpdate, "raw">> = {
  read: readPlainClusterLoadAssignment,
  nameOf: (update) => update.clusterName,
};

/**
 * Validates a ClusterLoadAssignment (the fast wire view, or a fully decoded message cast to it: both have the fields
 * read here, except the view's derived `hashKey`, which a message's metadata gives) with gRPC's rules and builds the
 * update without `raw`.
 */
export function validateClusterLoadAssignment(
  proto: ClusterLoadAssignmentView,
  errors: ValidationErrors,
): Omit<EndpointUpdate, "raw"> {
  const priorities = parseEndpoints(proto, errors);
  const dropOverloads = parseDropOverloads(proto, errors);
  return { clusterName: proto.clusterName, priorities, dropOverloads };
}

/** EDS: `envoy.config.endpoint.v3.ClusterLoadAssignment`, validated as gRPC clients do. */
export const endpointResourceType: ResourceType<EndpointUpdate> = Object.freeze({
  typeUrl: CLUSTER_LOAD_ASSIGNMENT.typeUrl,
  typeName: "EndpointResource",
  allResourcesRequiredInSotW: false,
  usesWrapper: false,
  decode(resource: Any, _context: DecodeContext): DecodeResult<EndpointUpdate> {
    return decodeResource(
      resource,
      CLUSTER_LOAD_ASSIGNMENT,
      validateClusterLoadAssignment,
      PLAIN_CLUSTER_LOAD_ASSIGNMENT,
    );
  },
});
