// What an EDS resource (envoy.config.endpoint.v3.ClusterLoadAssignment) decodes to, and the parts of it both of its
// readers (endpoint.ts, endpoint-plain.ts) make the same way.
import type { ClusterLoadAssignment } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";

/** envoy `HealthStatus` names. gRPC uses endpoints that are UNKNOWN, HEALTHY or (for overrides) DRAINING. */
export type HealthStatusName = "UNKNOWN" | "HEALTHY" | "UNHEALTHY" | "DRAINING" | "TIMEOUT" | "DEGRADED";

export const HEALTH_STATUS_NAMES: readonly HealthStatusName[] = Object.freeze([
  "UNKNOWN",
  "HEALTHY",
  "UNHEALTHY",
  "DRAINING",
  "TIMEOUT",
  "DEGRADED",
]);

/** A numeric IP address (as sent) and port. */
export interface EndpointAddress {
  readonly address: string;
  readonly port: number;
}

export interface Endpoint {
  /** The endpoint's `address`, then its `additional_addresses` (dual stack). */
  readonly addresses: readonly EndpointAddress[];
  readonly healthStatus: HealthStatusName;
  /** `load_balancing_weight`, 1 when unset. */
  readonly weight: number;
  /** `hostname` (empty when unset). */
  readonly hostname: string;
  /**
   * A76: the string `hash_key` of the endpoint's `envoy.lb` filter metadata, where ring_hash places the endpoint
   * instead of by its address; empty when unset or not a string.
   */
  readonly hashKey: string;
}

export interface LocalityName {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

export interface Locality {
  readonly locality: LocalityName;
  readonly weight: number;
  readonly endpoints: readonly Endpoint[];
}

export interface Priority {
  readonly localities: readonly Locality[];
}

export interface DropOverload {
  readonly category: string;
  /** `drop_percentage` normalised to parts per million, at most 1,000,000. */
  readonly dropsPerMillion: number;
}

export interface EndpointUpdate {
  readonly clusterName: string;
  /** Index = priority; every priority from 0 to the highest holds at least one locality. */
  readonly priorities: readonly Priority[];
  readonly dropOverloads: readonly DropOverload[];
  /** The decoded message (non-enumerable; decoded on first access, then kept). */
  readonly raw: ClusterLoadAssignment;
}

/** How many locality names `localityName` remembers. */
const REMEMBERED_LOCALITY_NAMES = 8;
const rememberedLocalityNames: LocalityName[] = [];
let nextForgotten = 0;

/**
 * The frozen name of a locality, the same object as an earlier resource's when it named the same locality lately: a
 * mesh's EDS resources name a few localities over and over, and each cached one would otherwise hold its own copy of
 * the name and its strings (docs/architecture.md, "What a cached resource holds").
 */
export function localityName(region: string, zone: string, subZone: string): LocalityName {
  for (let i = 0; i < rememberedLocalityNames.length; i++) {
    const name = rememberedLocalityNames[i]!;
    if (name.region === region && name.zone === zone && name.subZone === subZone) return name;
  }
  const name = Object.freeze({ region, zone, subZone });
  if (rememberedLocalityNames.length < REMEMBERED_LOCALITY_NAMES) rememberedLocalityNames.push(name);
  else {
    rememberedLocalityNames[nextForgotten] = name;
    nextForgotten = (nextForgotten + 1) % REMEMBERED_LOCALITY_NAMES;
  }
  return name;
}

/** The localities of one priority while a resource is read, and their names once there are many. */
export interface LocalityGroup {
  /** Undefined until the first. */
  localities: Locality[] | undefined;
  /** The locality names met (`region\0zone\0sub_zone`), once there are more than `SCANNED_LOCALITIES`. */
  names: Set<string> | undefined;
}

/** Locality names of a priority past this many are looked up in a set, not compared one by one. */
const SCANNED_LOCALITIES = 8;

const nameKey = (region: string, zone: string, subZone: string) => `${region}\u0000${zone}\u0000${subZone}`;

/** Records a locality name in its priority's group; false when the group already has it. */
export function addLocalityName(group: LocalityGroup, region: string, zone: string, subZone: string): boolean {
  const { localities } = group;
  if (localities === undefined) return true;
  if (group.names === undefined) {
    for (let l = 0; l < localities.length; l++) {
      const name = localities[l]!.locality;
      if (name.region === region && name.zone === zone && name.subZone === subZone) return false;
    }
    if (localities.length < SCANNED_LOCALITIES) return true;
    group.names = new Set(localities.map(({ locality: n }) => nameKey(n.region, n.zone, n.subZone)));
  }
  const key = nameKey(region, zone, subZone);
  if (group.names.has(key)) return false;
  group.names.add(key);
  return true;
}
