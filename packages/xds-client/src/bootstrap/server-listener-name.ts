// A36 / A47: the name of the Listener an xDS-enabled server watches, from the bootstrap's
// `server_listener_resource_name_template` and the address the server listens on.

import { parseIpValue } from "../shared/ip-address.js";
import { BootstrapError } from "./bootstrap.js";
import type { Bootstrap } from "./bootstrap-types.js";

/** The listening address, as the server binds it. */
export interface ListeningAddress {
  /** An IP literal (`0.0.0.0`, `::`, `127.0.0.1`, ...). */
  readonly host: string;
  readonly port: number;
}

/** `ip:port`, an IPv6 host in brackets (`[::]:8080`), as gRPC writes a listening address. */
export function formatListeningAddress(address: ListeningAddress): string {
  return address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

const UNRESERVED_OR_PATH = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;

/**
 * Percent-encodes what may not stand in a URI path: everything but unreserved characters, sub-delims, `:`, `@` and
 * `/` (UTF-8 bytes, upper-case hex), as gRPC does for `xdstp:` templates. `[::]:80` becomes `%5B::%5D:80`.
 */
export function percentEncodePath(text: string): string {
  let out = "";
  for (const char of text) {
    if (UNRESERVED_OR_PATH.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Fills a template in: every `%s` becomes the listening `ip:port`, percent-encoded when the template is an `xdstp:`
 * name (A47); other templates take it as is (A36: no special character handling).
 */
export function expandServerListenerTemplate(template: string, address: ListeningAddress): string {
  const hostPort = formatListeningAddress(address);
  return template.replaceAll("%s", template.startsWith("xdstp:") ? percentEncodePath(hostPort) : hostPort);
}

/**
 * The Listener name an xDS-enabled server listening on `address` watches. Throws a BootstrapError naming
 * `server_listener_resource_name_template` when the bootstrap has none (A36: it has no default).
 */
export function serverListenerResourceName(bootstrap: Bootstrap, address: ListeningAddress): string {
  const template = bootstrap.serverListenerResourceNameTemplate;
  if (template === undefined) {
    throw new BootstrapError([
      "server_listener_resource_name_template: is required for an xDS-enabled server (A36: it has no default)",
    ]);
  }
  return expandServerListenerTemplate(template, address);
}

/**
 * Whether a server Listener's `address` is the one the server listens on (A36: otherwise the server does not serve
 * with it; that is not a NACK). Ports must be equal; hosts equal as IP addresses (`::` and `0:0::0` are one), else as
 * text. A wildcard matches only the same wildcard: `0.0.0.0` is not `::`.
 */
export function listenerAddressMatches(
  address: { readonly host: string; readonly port: number },
  listening: ListeningAddress,
): boolean {
  if (address.port !== listening.port) return false;
  const a = parseIpValue(address.host);
  const b = parseIpValue(listening.host);
  if (a === undefined || b === undefined) return address.host === listening.host;
  return a.family === b.family && a.value === b.value;
}
