// The ring of gRPC's ring_hash policy (A42, with A61's picker): configuration limits, construction once per
// endpoint set, an allocation-free O(log n) lookup, and the walk that turns a request hash into a pick or a
// connection attempt. See docs/decisions.md#policies-ring-hash.

import { xxHash64Into } from "./xx-hash64.js";

/** Envoy's and gRPC's limit on either ring size field; larger values are refused (NACKed). */
export const RING_SIZE_UPPER_BOUND = 8_388_608;
/** Default `minimum_ring_size`. */
export const DEFAULT_MIN_RING_SIZE = 1024;
/** The local cap applied to both sizes (A42: a client-side option, default 4096). */
export const DEFAULT_RING_SIZE_CAP = 4096;

export interface RingHashConfig {
  /** Already capped: 1 ≤ minRingSize ≤ maxRingSize ≤ the local cap. */
  readonly minRingSize: number;
  readonly maxRingSize: number;
  /**
   * A76: the request header whose value is the request hash key, instead of the route's `hash_policy` (a call
   * without it, or with it empty, gets a random hash). Absent: the route's hash policies (A42).
   */
  readonly requestHashHeader?: string;
}

export type RingHashConfigResult = { ok: true; config: RingHashConfig } | { ok: false; error: string };

export interface RingHashConfigInput {
  /** `minimum_ring_size` as received (undefined when unset). */
  readonly minimumRingSize?: number | bigint | undefined;
  /** `maximum_ring_size` as received (undefined when unset: xDS's default 8M, then capped). */
  readonly maximumRingSize?: number | bigint | undefined;
}

/**
 * Validates and caps ring sizes as A42 says for a config from xDS: a value above 8M is an error, min > max is an
 * error, then both are lowered to `ringSizeCap` (default 4096). Never throws.
 */
export function resolveRingHashConfig(
  input: RingHashConfigInput,
  ringSizeCap = DEFAULT_RING_SIZE_CAP,
): RingHashConfigResult {
  if (!Number.isSafeInteger(ringSizeCap) || ringSizeCap < 1 || ringSizeCap > RING_SIZE_UPPER_BOUND) {
    return { ok: false, error: `ring size cap ${ringSizeCap} is not an integer in [1, ${RING_SIZE_UPPER_BOUND}]` };
  }
  const min = input.minimumRingSize === undefined ? DEFAULT_MIN_RING_SIZE : Number(input.minimumRingSize);
  const max = input.maximumRingSize === undefined ? RING_SIZE_UPPER_BOUND : Number(input.maximumRingSize);
  for (const [name, value] of [
    ["minimum_ring_size", min],
    ["maximum_ring_size", max],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > RING_SIZE_UPPER_BOUND) {
      return { ok: false, error: `ring_hash ${name} ${value} is not in [1, ${RING_SIZE_UPPER_BOUND}]` };
    }
  }
  if (min > max)
    return { ok: false, error: `ring_hash minimum_ring_size ${min} is greater than maximum_ring_size ${max}` };
  return { ok: true, config: { minRingSize: Math.min(min, ringSizeCap), maxRingSize: Math.min(max, ringSizeCap) } };
}

/**
 * One endpoint of the ring: `key` is what its entries hash (its A76 hash key, else its first address), `weight` is
 * locality × endpoint weight.
 */
export interface RingEndpoint {
  readonly key: string;
  readonly weight: number;
}

/** A built ring. Positions are 0..size-1 in hash order; endpoints are indexes into the list it was built from. */
export interface HashRing {
  readonly size: number;
  readonly endpointCount: number;
  /** Position of the first entry whose hash is ≥ the 64-bit hash (hi, lo), wrapping to 0 past the last. */
  find(hashHi: number, hashLo: number): number;
  /** The endpoint index at a ring position. */
  endpointAt(position: number): number;
  /** The entry hash at a position, for tests and diagnostics. */
  hashAt(position: number): bigint;
}

const keyEncoder = new TextEncoder();
let keyScratch = new Uint8Array(128);
const hashOut = new Uint32Array(2);

/** Writes XXH64(`${key}_${index}`) to hashOut with the key's bytes already at keyScratch[0..keyLength). */
function hashEntry(keyLength: number, index: number): void {
  let at = keyLength;
  keyScratch[at++] = 0x5f; // "_"
  const digits = index === 0 ? 1 : Math.floor(Math.log10(index)) + 1;
  let rest = index;
  for (let d = digits - 1; d >= 0; d--) {
    keyScratch[at + d] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  xxHash64Into(keyScratch, hashOut, at + digits);
}

/**
 * Builds the ring as A42 (after Envoy) does: weights normalised to sum 1, the ring scaled so the lightest endpoint
 * gets a whole number of entries when `minRingSize` allows, clamped to `maxRingSize`; endpoint i's n-th entry
 * hashes `${key}_${n}` (the same keys grpc-go uses, so rings agree across implementations). Throws on an empty key
 * or a weight that is not a positive finite number. Two endpoints may share a key (two A76 hash keys alike): their
 * entries hash alike, and the first of them in the list comes first at each shared point, so it takes those picks.
 */
export function buildHashRing(endpoints: readonly RingEndpoint[], config: RingHashConfig): HashRing {
  let total = 0;
  for (const e of endpoints) {
    if (e.key === "") throw new Error("ring_hash endpoint key is empty");
    if (!(Number.isFinite(e.weight) && e.weight > 0))
      throw new Error(`ring_hash endpoint "${e.key}" has weight ${e.weight}`);
    total += e.weight;
  }
  if (endpoints.length === 0) return new Ring(new Uint32Array(0), new Uint32Array(0), new Uint32Array(0), 0);
  let minNormalized = 1;
  for (const e of endpoints) minNormalized = Math.min(minNormalized, e.weight / total);
  const scale = Math.min(Math.ceil(minNormalized * config.minRingSize) / minNormalized, config.maxRingSize);
  const capacity = Math.ceil(scale) + 1;
  const his = new Uint32Array(capacity);
  const los = new Uint32Array(capacity);
  const owners = new Uint32Array(capacity);
  let count = 0;
  let current = 0;
  let target = 0;
  for (let i = 0; i < endpoints.length; i++) {
    const e = endpoints[i] as RingEndpoint;
    target += (scale * e.weight) / total;
    if (current >= target) continue;
    if (e.key.length * 3 + 24 > keyScratch.length) keyScratch = new Uint8Array(e.key.length * 3 + 24);
    const { written } = keyEncoder.encodeInto(e.key, keyScratch);
    for (let n = 0; current < target && count < capacity; n++, current++, count++) {
      hashEntry(written, n);
      his[count] = hashOut[0] as number;
      los[count] = hashOut[1] as number;
      owners[count] = i;
    }
  }
  // Sort positions by (hash, endpoint index): equal hashes (vanishingly rare) keep a deterministic order.
  const order = new Uint32Array(count);
  for (let k = 0; k < count; k++) order[k] = k;
  order.sort((a, b) => {
    const ha = his[a] as number;
    const hb = his[b] as number;
    if (ha !== hb) return ha - hb;
    const la = los[a] as number;
    const lb = los[b] as number;
    if (la !== lb) return la - lb;
    return (owners[a] as number) - (owners[b] as number);
  });
  const sortedHi = new Uint32Array(count);
  const sortedLo = new Uint32Array(count);
  const sortedOwner = new Uint32Array(count);
  for (let k = 0; k < count; k++) {
    const from = order[k] as number;
    sortedHi[k] = his[from] as number;
    sortedLo[k] = los[from] as number;
    sortedOwner[k] = owners[from] as number;
  }
  return new Ring(sortedHi, sortedLo, sortedOwner, endpoints.length);
}

class Ring implements HashRing {
  readonly size: number;
  constructor(
    private readonly his: Uint32Array,
    private readonly los: Uint32Array,
    private readonly owners: Uint32Array,
    readonly endpointCount: number,
  ) {
    this.size = his.length;
  }

  find(hashHi: number, hashLo: number): number {
    const his = this.his;
    const los = this.los;
    let low = 0;
    let high = his.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const h = his[mid] as number;
      if (h < hashHi || (h === hashHi && (los[mid] as number) < hashLo)) low = mid + 1;
      else high = mid;
    }
    return low === his.length ? 0 : low;
  }

  endpointAt(position: number): number {
    return this.owners[position] as number;
  }

  hashAt(position: number): bigint {
    return (BigInt(this.his[position] as number) << 32n) | BigInt(this.los[position] as number);
  }
}
