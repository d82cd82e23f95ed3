// A36: a server Listener is only usable when its `address` is the TCP address the server listens on, IP and port.
// IPs compare by value (`0:0::0` is `::`); a Listener for another address means not serving, not a NACK.
import { isIP, SocketAddress } from "node:net";
import type { ListenerAddress } from "@xdskit/xds-client";

/** The address the server listens on: an IP literal and the bound port. */
export interface ListeningAddress {
  readonly host: string;
  readonly port: number;
}

/** An IP literal in its canonical text (lower case, IPv6 compressed), or undefined if it is not one. */
export function canonicalIp(host: string): string | undefined {
  const family = isIP(host);
  if (family === 0) return undefined;
  return new SocketAddress({ address: host, family: family === 6 ? "ipv6" : "ipv4" }).address;
}

/** Why `address` is not the listening address, or undefined when it is. */
export function addressMismatch(address: ListenerAddress, listening: ListeningAddress): string | undefined {
  const host = canonicalIp(address.host);
  if (host === canonicalIp(listening.host) && address.port === listening.port) return undefined;
  const shown = (h: string, p: number) => (h.includes(":") ? `[${h}]:${p}` : `${h}:${p}`);
  return `its address ${shown(address.host, address.port)} is not the listening address ${shown(listening.host, listening.port)}`;
}
