/**
 * IP literal parsing for endpoint addresses: gRPC accepts only numeric IPv4/IPv6 addresses in EDS (inet_pton
 * rules: dotted-quad IPv4 without leading zeros; IPv6 with `::`, an optional trailing dotted quad and an optional
 * `%zone`). The canonical text keys duplicate detection, so `::1` and `0:0::1` count as the same address.
 */

const DOT = 46;
const COLON = 58;
const ZERO = 48;
const NINE = 57;

/** The IPv4 address as a 32-bit number, or -1 when `text[start, end)` is not a dotted quad. */
export function ipv4Value(text: string, start: number, end: number): number {
  let value = 0;
  let octets = 0;
  let i = start;
  while (octets < 4) {
    const octetStart = i;
    let octet = 0;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c < ZERO || c > NINE) break;
      octet = octet * 10 + (c - ZERO);
      i++;
    }
    const digits = i - octetStart;
    if (digits === 0 || digits > 3 || octet > 255) return -1;
    if (digits > 1 && text.charCodeAt(octetStart) === ZERO) return -1;
    value = value * 256 + octet;
    octets++;
    if (octets < 4) {
      if (i >= end || text.charCodeAt(i) !== DOT) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}

function hexDigit(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** The 8 groups of an IPv6 address, or undefined when invalid. */
function ipv6Groups(text: string, end: number): number[] | undefined {
  const head: number[] = [];
  const tail: number[] = [];
  let groups = head;
  let compressed = false;
  let i = 0;
  if (text.startsWith("::")) {
    compressed = true;
    groups = tail;
    i = 2;
    if (i === end) return [0, 0, 0, 0, 0, 0, 0, 0];
  }
  while (i < end) {
    // A trailing dotted quad fills the last two groups.
    const nextColon = text.indexOf(":", i);
    const segmentEnd = nextColon < 0 || nextColon > end ? end : nextColon;
    if (segmentEnd === end && text.indexOf(".", i) >= 0 && text.indexOf(".", i) < end) {
      const v4 = ipv4Value(text, i, end);
      if (v4 < 0) return undefined;
      groups.push(Math.floor(v4 / 65536), v4 % 65536);
      i = end;
      break;
    }
    let group = 0;
    const groupStart = i;
    while (i < end) {
      const d = hexDigit(text.charCodeAt(i));
      if (d < 0) break;
      group = group * 16 + d;
      i++;
    }
    const digits = i - groupStart;
    if (digits === 0 || digits > 4) return undefined;
    groups.push(group);
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON) return undefined;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (compressed) return undefined;
      compressed = true;
      groups = tail;
      i++;
      if (i === end) break;
    } else if (i === end) {
      return undefined;
    }
  }
  const total = head.length + tail.length;
  if (compressed ? total > 7 : total !== 8) return undefined;
  const result = head;
  for (let fill = 8 - total; fill > 0; fill--) result.push(0);
  for (const group of tail) result.push(group);
  return result;
}

/** RFC 5952 text of 8 groups: lowercase, the longest run of two or more zero groups written `::`. */
function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return groups.map((g) => g.toString(16)).join(":");
  const before = groups
    .slice(0, bestStart)
    .map((g) => g.toString(16))
    .join(":");
  const after = groups
    .slice(bestStart + bestLength)
    .map((g) => g.toString(16))
    .join(":");
  return `${before}::${after}`;
}

/**
 * The canonical text of an IP literal, or undefined when `text` is not one. IPv4 text is canonical as accepted;
 * IPv6 is rewritten per RFC 5952 (a `%zone` suffix kept as is).
 */
export function canonicalIp(text: string): string | undefined {
  if (text.indexOf(":") < 0) return ipv4Value(text, 0, text.length) >= 0 ? text : undefined;
  const percent = text.indexOf("%");
  if (percent === text.length - 1) return undefined;
  const end = percent < 0 ? text.length : percent;
  const groups = ipv6Groups(text, end);
  if (groups === undefined) return undefined;
  const formatted = formatIpv6(groups);
  return percent < 0 ? formatted : formatted + text.slice(percent);
}

/** `host:port`, bracketing an IPv6 host (`[::1]:443`). */
export function joinHostPort(host: string, port: number): string {
  return host.indexOf(":") >= 0 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * An IP range (envoy `CidrRange`) as the decoders validate it: the address masked to the prefix length, which is
 * clamped to the family's width (32 or 128); an unset `prefix_len` is 0. `/0` keeps its family: `0.0.0.0/0` holds
 * every IPv4 address and no IPv6 one (IPv4-mapped IPv6 addresses are read as IPv4 wherever ranges are matched).
 */
export interface CidrRange {
  readonly family: 4 | 6;
  /** The masked network address in canonical text (RFC 5952 for IPv6). */
  readonly address: string;
  readonly prefixLen: number;
}

/** A parsed IP address: IPv4 as an unsigned 32-bit number, IPv6 as a 128-bit bigint. */
export type IpValue = { readonly family: 4; readonly value: number } | { readonly family: 6; readonly value: bigint };

function groupsValue(groups: readonly number[]): bigint {
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(group);
  return value;
}

const V4_MAPPED_PREFIX = 0xffffn << 32n;
const V4_MAPPED_MASK = ~0xffffffffn & ((1n << 128n) - 1n);

/**
 * Parses an IP literal as a socket reports it. A `%zone` suffix is ignored; an IPv4-mapped IPv6 address
 * (`::ffff:10.0.0.1`, what a dual-stack socket reports for an IPv4 peer) is read as the IPv4 address, so ranges
 * and loopback checks treat it as the IPv4 peer it is. Undefined when `text` is not an IP literal.
 */
export function parseIpValue(text: string): IpValue | undefined {
  if (text.indexOf(":") < 0) {
    const v4 = ipv4Value(text, 0, text.length);
    return v4 < 0 ? undefined : { family: 4, value: v4 };
  }
  const percent = text.indexOf("%");
  const groups = ipv6Groups(text, percent < 0 ? text.length : percent);
  if (groups === undefined) return undefined;
  const value = groupsValue(groups);
  if ((value & V4_MAPPED_MASK) === V4_MAPPED_PREFIX) return { family: 4, value: Number(value & 0xffffffffn) };
  return { family: 6, value };
}

/** The canonical text of a parsed address (dotted quad, or RFC 5952). */
export function formatIpValue(ip: IpValue): string {
  if (ip.family === 4) {
    const v = ip.value;
    return `${Math.floor(v / 0x1000000)}.${Math.floor(v / 0x10000) % 256}.${Math.floor(v / 0x100) % 256}.${v % 256}`;
  }
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((ip.value >> shift) & 0xffffn));
  return formatIpv6(groups);
}

/**
 * The first `prefixLen` bits of an address, as a number (IPv4) or bigint (IPv6): the key of its network in a table
 * of ranges of that length. Two addresses are in the same `/prefixLen` network when their keys are equal.
 */
export function networkKey(ip: IpValue, prefixLen: number): number | bigint {
  if (ip.family === 4) return prefixLen === 0 ? 0 : ip.value >>> (32 - prefixLen);
  return ip.value >> BigInt(128 - prefixLen);
}

/** Whether `ip` is in `range` (whose family it must share). */
export function ipInRange(ip: IpValue, range: CidrRange): boolean {
  if (ip.family !== range.family) return false;
  const network = parseIpValue(range.address);
  return network !== undefined && networkKey(ip, range.prefixLen) === networkKey(network, range.prefixLen);
}

/** 127.0.0.0/8 or ::1 (A36's SAME_IP_OR_LOOPBACK, with the address itself). */
export function isLoopbackIp(ip: IpValue): boolean {
  return ip.family === 4 ? ip.value >>> 24 === 127 : ip.value === 1n;
}

/**
 * Validates an envoy `CidrRange`: `addressPrefix` must be an IP literal; `prefixLen` (undefined when unset: 0) is
 * clamped to the family's width; the address is masked to it. Returns the range or a problem text.
 */
export function parseCidrRange(addressPrefix: string, prefixLen: number | undefined): CidrRange | string {
  if (addressPrefix.indexOf("%") >= 0) return `"${addressPrefix}" is not an IP address (zone ids are not allowed)`;
  const isV6 = addressPrefix.indexOf(":") >= 0;
  let ip: IpValue | undefined;
  if (isV6) {
    const groups = ipv6Groups(addressPrefix, addressPrefix.length);
    ip = groups === undefined ? undefined : { family: 6, value: groupsValue(groups) };
  } else {
    const v4 = ipv4Value(addressPrefix, 0, addressPrefix.length);
    ip = v4 < 0 ? undefined : { family: 4, value: v4 };
  }
  if (ip === undefined) return `"${addressPrefix}" is not an IP address`;
  const width = ip.family === 4 ? 32 : 128;
  const length = Math.min(prefixLen ?? 0, width);
  let masked: IpValue;
  if (ip.family === 4) {
    masked = { family: 4, value: length === 0 ? 0 : ((ip.value >>> (32 - length)) << (32 - length)) >>> 0 };
  } else {
    const shift = BigInt(128 - length);
    masked = { family: 6, value: (ip.value >> shift) << shift };
  }
  return Object.freeze({ family: ip.family, address: formatIpValue(masked), prefixLen: length });
}
