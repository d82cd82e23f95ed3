// The plain EDS reader (docs/architecture.md, "The plain EDS reader"): one pass over the bytes of a
// ClusterLoadAssignment as control planes send most of them (IPv4 endpoints, each with one address, in localities
// with a weight), building the update as it reads: no wire views, no BinaryReader, no list that is not kept. It
// answers only for a resource that the general path (views, then validation) would accept, and then with the update
// the general path would make; anything else (another field, a repeated singular field, a varint past four bytes, a
// non-ASCII string, a resource the validation would reject or read differently) returns undefined, and the general
// path decides. test/fuzz/endpoint-plain.test.ts checks both against each other.
import { ipv4Value } from "../shared/ip-address.js";
import { latin1Slice } from "../wire/plain-fields.js";
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
import { appendTo, EMPTY, keptAppended, UINT32_MAX } from "./validation.js";

/** Wire types. */
const VARINT = 0;
const LEN = 2;

const EMPTY_BYTES = new Uint8Array(0);

/** The bytes being read and where (one read runs at a time, synchronously). */
let buf: Uint8Array = EMPTY_BYTES;
let pos = 0;

/** A varint of at most four bytes (below 2^28) ending by `end`, or -1 (a longer one is left to the general path). */
function varint(end: number): number {
  let b = pos < end ? buf[pos++]! : 0x100;
  if (b < 0x80) return b;
  if (b === 0x100) return -1;
  let value = b & 0x7f;
  for (let shift = 7; shift < 28; shift += 7) {
    if (pos >= end) return -1;
    b = buf[pos++]!;
    value |= (b & 0x7f) << shift;
    if (b < 0x80) return value;
  }
  return -1;
}

/** The end of the length-delimited field at `pos` (its length read), or -1 when it does not fit in `end`. */
function delimited(end: number): number {
  const length = varint(end);
  return length < 0 || length > end - pos ? -1 : pos + length;
}

/** The ASCII string at `pos` (length-prefixed, within `end`), or undefined. */
function ascii(end: number): string | undefined {
  const stop = delimited(end);
  if (stop < 0) return undefined;
  const start = pos;
  for (let i = start; i < stop; i++) if (buf[i]! >= 0x80) return undefined;
  pos = stop;
  return start === stop ? "" : latin1Slice.call(buf, start, stop);
}

/** A `google.protobuf.UInt32Value` of one `value` field at most (within `end`), or -1. */
function wrappedUint32(end: number): number {
  const stop = delimited(end);
  if (stop < 0) return -1;
  let value = 0;
  if (pos < stop) {
    if (buf[pos++] !== ((1 << 3) | VARINT)) return -1;
    value = varint(stop);
    if (value < 0 || pos !== stop) return -1;
  }
  return value;
}

/** The addresses of the resource being read, as `ip * 65536 + port` (IPv4 only here). */
let seenFirst = -1;
let seenRest: Set<number> | undefined;

/** A `SocketAddress` of an IPv4 `address` and a `port_value`, each at most once, or undefined. */
function readSocketAddress(end: number): EndpointAddress | undefined {
  let text: string | undefined;
  let port = -1;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === ((2 << 3) | LEN) && text === undefined) {
      text = ascii(end);
      if (text === undefined) return undefined;
    } else if (tag === ((3 << 3) | VARINT) && port < 0) {
      port = varint(end);
      if (port < 0) return undefined;
    } else return undefined;
  }
  if (text === undefined || text.indexOf(":") >= 0) return undefined;
  if (port < 0) port = 0;
  else if (port > 65535) return undefined;
  const ip = ipv4Value(text, 0, text.length);
  if (ip < 0) return undefined;
  const key = ip * 65536 + port;
  if (seenFirst < 0) seenFirst = key;
  else {
    if (key === seenFirst || seenRest?.has(key)) return undefined;
    if (seenRest === undefined) seenRest = new Set();
    seenRest.add(key);
  }
  return Object.freeze({ address: text, port });
}

/** What `readEndpoint` read last. */
let endpointAddress: EndpointAddress | undefined;
let endpointHostname = "";

/** An `Endpoint` of an `address` (of a socket address) and maybe a `hostname`, each once; false when not plain. */
function readEndpoint(end: number): boolean {
  let address: EndpointAddress | undefined;
  let hostname: string | undefined;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === ((1 << 3) | LEN) && address === undefined) {
      // An envoy.config.core.v3.Address that is one socket_address.
      const stop = delimited(end);
      if (stop < 0 || pos === stop || buf[pos++] !== ((1 << 3) | LEN) || delimited(stop) !== stop) return false;
      address = readSocketAddress(stop);
      if (address === undefined) return false;
    } else if (tag === ((3 << 3) | LEN) && hostname === undefined) {
      hostname = ascii(end);
      if (hostname === undefined) return false;
    } else return false;
  }
  if (address === undefined) return false;
  endpointAddress = address;
  endpointHostname = hostname ?? "";
  return true;
}

/**
 * An `LbEndpoint` of an `endpoint`, maybe a `health_status` and a `load_balancing_weight` above 0 (each once): the
 * endpoint, null when gRPC skips it for its health status, undefined when not plain.
 */
function readLbEndpoint(end: number): Endpoint | null | undefined {
  let read = false;
  let health = -1;
  let weight = -1;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === ((1 << 3) | LEN) && !read) {
      const stop = delimited(end);
      if (stop < 0 || !readEndpoint(stop)) return undefined;
      read = true;
    } else if (tag === ((2 << 3) | VARINT) && health < 0) {
      health = varint(end);
      if (health < 0) return undefined;
    } else if (tag === ((4 << 3) | LEN) && weight < 0) {
      weight = wrappedUint32(end);
      if (weight <= 0) return undefined;
    } else return undefined;
  }
  if (!read) return undefined;
  const healthStatus = HEALTH_STATUS_NAMES[Math.max(health, 0)];
  if (healthStatus === undefined) return null;
  // The general path's endpoint, key for key (endpoint.ts).
  return Object.freeze({
    addresses: Object.freeze([endpointAddress!]),
    healthStatus,
    weight: weight < 0 ? 1 : weight,
    hostname: endpointHostname,
    hashKey: "",
  });
}

/** A priority's localities while they are read. */
interface Group extends LocalityGroup {
  readonly priority: number;
  totalWeight: number;
}

/** Priorities past this many are left to the general path. */
const MAX_PRIORITIES = 8;

/** The groups of the resource being read (emptied by each read). */
const groups: Group[] = [];

/**
 * A `LocalityLbEndpoints` of a `locality`, its `lb_endpoints`, a `load_balancing_weight` above 0 and maybe a
 * `priority` (each singular field at most once), added to its priority's group; false when outside the reader's
 * reach.
 */
function readLocality(end: number): boolean {
  let region: string | undefined;
  let zone = "";
  let subZone = "";
  let endpoints: Endpoint[] | undefined;
  let weight = -1;
  let priority = -1;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === ((2 << 3) | LEN)) {
      const stop = delimited(end);
      if (stop < 0) return false;
      const endpoint = readLbEndpoint(stop);
      if (endpoint === undefined) return false;
      if (endpoint !== null) endpoints = appendTo(endpoints, endpoint);
    } else if (tag === ((1 << 3) | LEN) && region === undefined) {
      const stop = delimited(end);
      if (stop < 0) return false;
      region = "";
      let fields = 0;
      while (pos < stop) {
        const field = buf[pos++]!;
        const bit =
          field === ((1 << 3) | LEN) ? 1 : field === ((2 << 3) | LEN) ? 2 : field === ((3 << 3) | LEN) ? 4 : 0;
        if (bit === 0 || (fields & bit) !== 0) return false;
        fields |= bit;
        const text = ascii(stop);
        if (text === undefined) return false;
        if (bit === 1) region = text;
        else if (bit === 2) zone = text;
        else subZone = text;
      }
    } else if (tag === ((3 << 3) | LEN) && weight < 0) {
      weight = wrappedUint32(end);
      if (weight <= 0) return false;
    } else if (tag === ((5 << 3) | VARINT) && priority < 0) {
      priority = varint(end);
      if (priority < 0) return false;
    } else return false;
  }
  // No locality, or no weight (gRPC skips the locality: its contents are then left unchecked): the general path.
  if (region === undefined || weight < 0) return false;
  if (priority < 0) priority = 0;
  let group: Group | undefined;
  for (let g = 0; g < groups.length; g++) {
    if (groups[g]!.priority === priority) {
      group = groups[g];
      break;
    }
  }
  if (group === undefined) {
    if (groups.length === MAX_PRIORITIES) return false;
    group = { priority, localities: undefined, names: undefined, totalWeight: 0 };
    groups.push(group);
  } else if (!addLocalityName(group, region, zone, subZone)) return false;
  group.totalWeight += weight;
  group.localities = appendTo(
    group.localities,
    Object.freeze({ locality: localityName(region, zone, subZone), weight, endpoints: keptAppended(endpoints) }),
  );
  return true;
}

/**
 * The update of the ClusterLoadAssignment `bytes` (without `raw`), when it is plain (see above), or undefined: then
 * the general path reads it.
 */
export function readPlainClusterLoadAssignment(bytes: Uint8Array): Omit<EndpointUpdate, "raw"> | undefined {
  buf = bytes;
  pos = 0;
  seenFirst = -1;
  seenRest = undefined;
  groups.length = 0;
  try {
    return readAssignment(bytes.length);
  } finally {
    buf = EMPTY_BYTES;
    seenRest = undefined;
    endpointAddress = undefined;
    groups.length = 0;
  }
}

function readAssignment(end: number): Omit<EndpointUpdate, "raw"> | undefined {
  let clusterName: string | undefined;
  while (pos < end) {
    const tag = buf[pos++]!;
    if (tag === ((2 << 3) | LEN)) {
      const stop = delimited(end);
      if (stop < 0 || !readLocality(stop)) return undefined;
    } else if (tag === ((1 << 3) | LEN) && clusterName === undefined) {
      clusterName = ascii(end);
      if (clusterName === undefined) return undefined;
    } else return undefined;
  }
  if (groups.length > 1) groups.sort((a, b) => a.priority - b.priority);
  let priorities: Priority[] | undefined;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g]!;
    // A missing priority or a sum past uint32 is an error: the general path reports it.
    if (group.priority !== g || group.totalWeight > UINT32_MAX) return undefined;
    priorities = appendTo(priorities, Object.freeze({ localities: keptAppended(group.localities) }));
  }
  const dropOverloads: readonly DropOverload[] = EMPTY;
  return { clusterName: clusterName ?? "", priorities: keptAppended(priorities), dropOverloads };
}
