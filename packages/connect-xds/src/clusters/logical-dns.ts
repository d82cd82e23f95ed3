// A LOGICAL_DNS cluster's name, resolved with Node's resolver (A37; see
// docs/decisions.md#connect-xds-aggregate-and-dns-clusters): once at start, again when the cluster's policy asks (a
// connection failed or was lost) at most once per `minIntervalMs`, and after a failed lookup with gRPC's backoff
// (1 s, x1.6, ±20 %, at most 120 s) until one succeeds.
import { lookup as dnsLookup } from "node:dns/promises";
import { type Clock, createBackoff } from "@xdskit/orca-lrs-bridge";
import { splitAddress } from "../connections/connection.js";

/** The addresses of `host`, in the resolver's order (`dns.lookup` with `all`, getaddrinfo: /etc/hosts included). */
export type DnsLookup = (host: string) => Promise<readonly { readonly address: string; readonly family: number }[]>;

export const nodeDnsLookup: DnsLookup = (host) => dnsLookup(host, { all: true });

/** C-core's default minimum time between two resolutions of one name (`grpc.dns_min_time_between_resolutions_ms`). */
export const MIN_RESOLUTION_INTERVAL_MS = 30_000;

export type DnsResult =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly error: string };

export interface LogicalDnsOptions {
  /** `host:port` (`[v6]:port`), the cluster's `dns_hostname`. */
  readonly hostname: string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly lookup?: DnsLookup;
  readonly minIntervalMs?: number;
  /** Every resolution's outcome: the addresses as `host:port` (IPv6 in brackets), or why it failed. */
  readonly onResult: (result: DnsResult) => void;
}

export interface LogicalDns {
  /** The policy asks for a new resolution (rate-limited; ignored while one is running or scheduled). */
  requestReresolution(): void;
  close(): void;
}

export function startLogicalDns(options: LogicalDnsOptions): LogicalDns {
  const { clock } = options;
  const lookup = options.lookup ?? nodeDnsLookup;
  const minIntervalMs = options.minIntervalMs ?? MIN_RESOLUTION_INTERVAL_MS;
  const backoff = createBackoff({}, options.random);
  const { host, port } = splitAddress(options.hostname);
  let closed = false;
  let running = false;
  let timer: unknown;
  let lastStart = Number.NEGATIVE_INFINITY;

  const schedule = (delayMs: number) => {
    timer = clock.setTimeout(() => {
      timer = undefined;
      resolve();
    }, delayMs);
  };

  function resolve(): void {
    if (closed) return;
    running = true;
    lastStart = clock.now();
    Promise.resolve()
      .then(() => lookup(host))
      .then(
        (found) => {
          running = false;
          if (closed) return;
          if (found.length === 0) {
            fail(`DNS name "${host}" has no addresses`);
            return;
          }
          backoff.reset();
          const addresses = found.map((a) => (a.family === 6 ? `[${a.address}]:${port}` : `${a.address}:${port}`));
          options.onResult({ ok: true, addresses });
        },
        (error: unknown) => {
          running = false;
          if (closed) return;
          fail(`DNS resolution of "${host}" failed: ${error instanceof Error ? error.message : String(error)}`);
        },
      );
  }

  function fail(error: string): void {
    options.onResult({ ok: false, error });
    if (!closed && timer === undefined) schedule(backoff.next());
  }

  resolve();
  return {
    requestReresolution() {
      if (closed || running || timer !== undefined) return;
      schedule(Math.max(0, lastStart + minIntervalMs - clock.now()));
    },
    close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
