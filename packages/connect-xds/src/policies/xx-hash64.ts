// XXH64 with seed 0, the hash gRPC's ring_hash and hash_policy use (A42; docs/decisions.md#policies-xx-hash).
//
// 64-bit arithmetic is done on unsigned 32-bit halves held in module-level registers, so hashing allocates
// nothing but the UTF-8 bytes of a string key (and those only past the reused scratch buffer). Every helper
// below writes its result to (rh, rl); callers copy it out before the next call.

const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;

let rh = 0;
let rl = 0;

/** (rh, rl) = a * b mod 2^64, on 16-bit limbs so every partial product stays exact in a double. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a48 = ah >>> 16;
  const a32 = ah & 0xffff;
  const a16 = al >>> 16;
  const a00 = al & 0xffff;
  const b48 = bh >>> 16;
  const b32 = bh & 0xffff;
  const b16 = bl >>> 16;
  const b00 = bl & 0xffff;
  let c00 = a00 * b00;
  let c16 = c00 >>> 16;
  c00 &= 0xffff;
  c16 += a16 * b00;
  let c32 = Math.floor(c16 / 0x10000);
  c16 &= 0xffff;
  c16 += a00 * b16;
  c32 += Math.floor(c16 / 0x10000);
  c16 &= 0xffff;
  c32 += a32 * b00;
  let c48 = Math.floor(c32 / 0x10000);
  c32 &= 0xffff;
  c32 += a16 * b16;
  c48 += Math.floor(c32 / 0x10000);
  c32 &= 0xffff;
  c32 += a00 * b32;
  c48 += Math.floor(c32 / 0x10000);
  c32 &= 0xffff;
  c48 += a48 * b00 + a32 * b16 + a16 * b32 + a00 * b48;
  c48 &= 0xffff;
  rh = ((c48 << 16) | c32) >>> 0;
  rl = ((c16 << 16) | c00) >>> 0;
}

/** (rh, rl) = a + b mod 2^64. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  rl = lo >>> 0;
  rh = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** (rh, rl) = rotl(a, r) for 0 < r < 64. */
function rotl(ah: number, al: number, r: number): void {
  if (r >= 32) {
    const t = ah;
    ah = al;
    al = t;
    r -= 32;
  }
  if (r === 0) {
    rh = ah;
    rl = al;
    return;
  }
  rh = ((ah << r) | (al >>> (32 - r))) >>> 0;
  rl = ((al << r) | (ah >>> (32 - r))) >>> 0;
}

/** XXH64's round: (acc + input * P2) rotl 31, * P1. */
function round(acch: number, accl: number, inh: number, inl: number): void {
  mul(inh, inl, P2H, P2L);
  add(acch, accl, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

function read32(b: Uint8Array, i: number): number {
  return (
    ((b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16) | ((b[i + 3] as number) << 24)) >>> 0
  );
}

/**
 * XXH64(data[0..length), seed 0) written to out[0] (high 32 bits) and out[1] (low 32 bits).
 * `length` defaults to the whole array (a prefix of a reused buffer may be hashed).
 */
export function xxHash64Into(data: Uint8Array, out: Uint32Array, length: number = data.length): void {
  let i = 0;
  let hh: number;
  let hl: number;
  if (length >= 32) {
    // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (seed 0).
    add(P1H, P1L, P2H, P2L);
    let v1h = rh;
    let v1l = rl;
    let v2h = P2H;
    let v2l = P2L;
    let v3h = 0;
    let v3l = 0;
    add(~P1H >>> 0, ~P1L >>> 0, 0, 1);
    let v4h = rh;
    let v4l = rl;
    const limit = length - 32;
    while (i <= limit) {
      round(v1h, v1l, read32(data, i + 4), read32(data, i));
      v1h = rh;
      v1l = rl;
      round(v2h, v2l, read32(data, i + 12), read32(data, i + 8));
      v2h = rh;
      v2l = rl;
      round(v3h, v3l, read32(data, i + 20), read32(data, i + 16));
      v3h = rh;
      v3l = rl;
      round(v4h, v4l, read32(data, i + 28), read32(data, i + 24));
      v4h = rh;
      v4l = rl;
      i += 32;
    }
    rotl(v1h, v1l, 1);
    hh = rh;
    hl = rl;
    rotl(v2h, v2l, 7);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v3h, v3l, 12);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    rotl(v4h, v4l, 18);
    add(hh, hl, rh, rl);
    hh = rh;
    hl = rl;
    const vs = [v1h, v1l, v2h, v2l, v3h, v3l, v4h, v4l];
    for (let k = 0; k < 8; k += 2) {
      // mergeRound: h ^= round(0, v); h = h * P1 + P4.
      round(0, 0, vs[k] as number, vs[k + 1] as number);
      mul((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, P1H, P1L);
      add(rh, rl, P4H, P4L);
      hh = rh;
      hl = rl;
    }
  } else {
    hh = P5H;
    hl = P5L;
  }
  // h += length (length < 2^53, so its high half is floor(length / 2^32)).
  add(hh, hl, Math.floor(length / 0x100000000) >>> 0, length >>> 0);
  hh = rh;
  hl = rl;
  while (i + 8 <= length) {
    round(0, 0, read32(data, i + 4), read32(data, i));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hh = rh;
    hl = rl;
    i += 8;
  }
  if (i + 4 <= length) {
    mul(0, read32(data, i), P1H, P1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hh = rh;
    hl = rl;
    i += 4;
  }
  while (i < length) {
    mul(0, data[i] as number, P5H, P5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11);
    mul(rh, rl, P1H, P1L);
    hh = rh;
    hl = rl;
    i++;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  hl = (rl ^ ((rl >>> 29) | (rh << 3))) >>> 0;
  hh = (rh ^ (rh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L);
  out[0] = rh;
  out[1] = (rl ^ rh) >>> 0;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);

/** XXH64 of a string's UTF-8 bytes, seed 0, into out = [high, low]; reuses one scratch buffer. */
export function xxHash64StringInto(text: string, out: Uint32Array): void {
  // A UTF-8 encoding takes at most 3 bytes per UTF-16 unit.
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  xxHash64Into(scratch, out, written);
}

const pair = new Uint32Array(2);

/** XXH64 (seed 0) of bytes, or of a string's UTF-8 bytes, as an unsigned 64-bit bigint. */
export function xxHash64(data: Uint8Array | string): bigint {
  if (typeof data === "string") xxHash64StringInto(data, pair);
  else xxHash64Into(data, pair);
  return (BigInt(pair[0] as number) << 32n) | BigInt(pair[1] as number);
}
