// Addresses as the filter chain match and RBAC read them: an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
// socket on a dual-stack `::` listener reports for an IPv4 peer) is the IPv4 address it maps.

const MAPPED_PREFIX = "::ffff:";

export function unmapIpv4(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  if (address.length > MAPPED_PREFIX.length && address.slice(0, MAPPED_PREFIX.length).toLowerCase() === MAPPED_PREFIX) {
    const rest = address.slice(MAPPED_PREFIX.length);
    if (rest.includes(".")) return rest;
  }
  return address;
}
