// A bootstrap `server_uri`, read as gRPC reads a channel target, and the HTTP/2 endpoint it names. Parsed by the
// bootstrap (which reports a bad one with its field path) and again by the transport, so a server config built by
// hand cannot make the transport throw.
import { isIPv4, isIPv6, connect as netConnect, type Socket } from "node:net";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";

/** One TCP address of a target. */
export interface TcpAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * A target: one TCP address (a host name or IP), several IP addresses (`ipv4:a:1,b:2`, `ipv6:...`: replicas of one
 * server, tried in turn: docs/decisions.md#replicas-in-a-bootstrap), or a unix socket.
 */
export type ServerTarget =
  | { readonly kind: "tcp"; readonly host: string; readonly port: number }
  | { readonly kind: "tcp-list"; readonly addresses: readonly TcpAddress[] }
  | { readonly kind: "unix"; readonly path: string };

export type ServerTargetResult =
  | { readonly ok: true; readonly target: ServerTarget }
  | { readonly ok: false; readonly error: string };

/** The port of a target that names none, as in gRPC. */
export const DEFAULT_SERVER_PORT = 443;

const SUPPORTED =
  "host[:port], [ipv6][:port], dns:[///]host[:port], ipv4:, ipv6:, unix:path, unix:///path, unix-abstract:name";

const DNS_LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

function fail(error: string): ServerTargetResult {
  return { ok: false, error };
}

function isDnsName(host: string): boolean {
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  return name.length > 0 && name.length <= 253 && name.split(".").every((label) => DNS_LABEL.test(label));
}

function parsePort(text: string): number | undefined {
  if (text === "") return DEFAULT_SERVER_PORT;
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** `host[:port]`, `[v6][:port]` or a bare IPv6 literal, split as gRPC splits them. */
function parseHostPort(text: string, allowName: boolean): ServerTargetResult {
  let host: string;
  let portText = "";
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return fail(`"${text}": "[" without a matching "]"`);
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) return fail(`"${text}": unexpected "${rest}" after "]"`);
    portText = rest.slice(1);
    if (!isIPv6(host)) return fail(`"${host}" is not an IPv6 address`);
  } else {
    const colon = text.indexOf(":");
    if (colon >= 0 && text.indexOf(":", colon + 1) >= 0) {
      // Several colons and no brackets: an IPv6 address without a port.
      host = text;
      if (!isIPv6(host)) return fail(`"${text}" is neither host:port nor an IPv6 address`);
    } else {
      host = colon < 0 ? text : text.slice(0, colon);
      portText = colon < 0 ? "" : text.slice(colon + 1);
      if (host === "") return fail(`"${text}": no host`);
      if (!isIPv4(host) && !(allowName && isDnsName(host))) {
        return fail(
          allowName ? `"${host}" is not a valid host name or IP address` : `"${host}" is not an IPv4 address`,
        );
      }
    }
  }
  if (host.includes("%")) return fail(`"${host}": IPv6 zone ids are not supported`);
  const port = parsePort(portText);
  if (port === undefined) return fail(`port "${portText}" is not a number from 1 to 65535`);
  return { ok: true, target: { kind: "tcp", host, port } };
}

function decodePath(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function parseUnix(rest: string, uri: string): ServerTargetResult {
  let path = rest;
  if (rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    if (authority !== "") return fail(`"${uri}": a unix target takes no authority (write unix:///absolute/path)`);
    path = rest.slice(2);
  }
  const decoded = decodePath(path);
  if (decoded === undefined) return fail(`"${uri}": bad percent-encoding in the path`);
  if (decoded === "") return fail(`"${uri}": no socket path`);
  return { ok: true, target: { kind: "unix", path: decoded } };
}

/** Parses a `server_uri`; the error says what is wrong (the caller names the field). */
export function parseServerTarget(uri: string): ServerTargetResult {
  if (uri === "") return fail("must not be empty");
  const colon = uri.indexOf(":");
  const scheme = colon < 0 ? "" : uri.slice(0, colon);
  const rest = uri.slice(colon + 1);
  switch (scheme) {
    case "unix":
      return parseUnix(rest, uri);
    case "unix-abstract": {
      const name = decodePath(rest);
      // Linux's abstract namespace: a socket path starting with a NUL byte.
      if (name === undefined) return fail(`"${uri}": bad percent-encoding`);
      return { ok: true, target: { kind: "unix", path: `\0${name}` } };
    }
    case "dns": {
      if (!rest.startsWith("//")) return parseHostPort(rest, true);
      const slash = rest.indexOf("/", 2);
      if (slash < 0) return fail(`"${uri}": no host after the authority`);
      if (slash > 2) return fail(`"${uri}": a DNS server authority is not supported (write dns:///host:port)`);
      return parseHostPort(rest.slice(slash + 1), true);
    }
    case "ipv4":
    case "ipv6": {
      // gRPC's address list: every address is one endpoint of the same server.
      const addresses: TcpAddress[] = [];
      for (const item of rest.split(",")) {
        if (item === "") return fail(`"${uri}": an empty address in the list`);
        const result = parseHostPort(item, false);
        if (!result.ok) return result;
        if (result.target.kind !== "tcp") return fail(`"${item}" is not an address`);
        if ((scheme === "ipv4") !== isIPv4(result.target.host)) {
          return fail(`"${result.target.host}" is not an ${scheme === "ipv4" ? "IPv4" : "IPv6"} address`);
        }
        addresses.push({ host: result.target.host, port: result.target.port });
      }
      if (addresses.length === 1) return { ok: true, target: { kind: "tcp", ...addresses[0]! } };
      return { ok: true, target: { kind: "tcp-list", addresses } };
    }
    default:
      // gRPC reads a target without a known scheme as a DNS name; one with `//` was meant as a URI.
      if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(uri)) {
        return fail(`unsupported scheme "${scheme}" (supported: ${SUPPORTED})`);
      }
      return parseHostPort(uri, true);
  }
}

/** How connect-node reaches a server: the base URL (scheme and :authority) and extra HTTP/2 session options. */
export interface ServerEndpoint {
  readonly baseUrl: string;
  readonly sessionOptions: { createConnection: () => Socket };
  /** How many addresses the target names (several for an `ipv4:`/`ipv6:` list). */
  readonly addressCount: number;
  /** The next connection dials the next address of the list (after the last, the first again). */
  moveToNextAddress(): void;
}

/** Dials one TCP address, in cleartext or (with `tls`) TLS. */
function dialTcp(address: TcpAddress, tls: (() => ConnectionOptions) | undefined): Socket {
  const { host, port } = address;
  if (tls === undefined) return netConnect({ host, port });
  return tlsConnect({
    ...tls(),
    host,
    port,
    ALPNProtocols: ["h2"],
    // SNI carries host names only; an IP address is checked against the certificate's IP SANs.
    ...(isIPv4(host) || isIPv6(host) ? {} : { servername: host }),
  });
}

/**
 * The endpoint of a `server_uri`. Every connection is dialled through `createConnection`, so the transport can watch
 * each socket from its start. With `tls`, it dials with the options `tls` returns at that moment (credentials are
 * read per connection) and ALPN h2; the server's certificate is checked against the target's host name, or the IP
 * address dialled. A unix socket is dialled with `localhost` as the authority and the name checked, as gRPC does. An
 * address list dials one address at a time, the current one, until `moveToNextAddress`; its authority is the first
 * address. A target that does not parse yields a connection that fails at once with the parse error, so that, like
 * an unreachable server, it surfaces as a connection error on the watches.
 */
export function serverEndpoint(uri: string, tls: (() => ConnectionOptions) | undefined): ServerEndpoint {
  const scheme = tls === undefined ? "http" : "https";
  const parsed = parseServerTarget(uri);
  const single = { addressCount: 1, moveToNextAddress: () => {} };
  if (!parsed.ok) {
    const error = new Error(`invalid server_uri "${uri}": ${parsed.error}`);
    return {
      baseUrl: `${scheme}://invalid.invalid`,
      sessionOptions: {
        createConnection: () => {
          throw error;
        },
      },
      ...single,
    };
  }
  const target = parsed.target;
  if (target.kind === "tcp" || target.kind === "tcp-list") {
    const addresses = target.kind === "tcp" ? [target] : target.addresses;
    const first = addresses[0]!;
    const host = first.host.includes(":") ? `[${first.host}]` : first.host;
    let current = 0;
    return {
      baseUrl: `${scheme}://${host}:${first.port}`,
      sessionOptions: { createConnection: () => dialTcp(addresses[current]!, tls) },
      addressCount: addresses.length,
      moveToNextAddress: () => {
        current = (current + 1) % addresses.length;
      },
    };
  }
  const path = target.path;
  return {
    baseUrl: `${scheme}://localhost`,
    sessionOptions: {
      createConnection: () =>
        tls === undefined
          ? netConnect({ path })
          : tlsConnect({ ...tls(), path, ALPNProtocols: ["h2"], servername: "localhost" }),
    },
    ...single,
  };
}
