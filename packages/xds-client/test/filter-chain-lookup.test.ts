// The filter-chain table (normalised, indexed by prefix length) against a brute-force "most specific match" over the
// chains as written: for random Listeners and connections, the Listener decodes exactly when no two normalised
// entries collide, and then the lookup picks the chain the plain reading of A36's rules picks. The plain reading uses
// node:net's BlockList for ranges, so it shares no IP code with the table.
import { BlockList, isIPv6 } from "node:net";
import type { FilterChainSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lookupFilterChain, selectFilterChain } from "../src/mesh/filter-chain-table.js";
import { listenerResourceType } from "../src/resources/index.js";
import { decodeWith, type Init, pack } from "./resources/context.js";

interface Range {
  readonly address: string;
  readonly prefixLen: number;
}

/** A chain's match as written (before normalisation). */
interface ChainSpec {
  readonly prefixRanges: readonly Range[];
  readonly sourceType: 0 | 1 | 2;
  readonly sourcePrefixRanges: readonly Range[];
  readonly sourcePorts: readonly number[];
  /** "raw_buffer" makes it matchable; "" or "tls" never match. */
  readonly transportProtocol: string;
}

const RANGES: readonly Range[] = [
  { address: "0.0.0.0", prefixLen: 0 },
  { address: "10.0.0.0", prefixLen: 8 },
  { address: "10.1.0.0", prefixLen: 16 },
  { address: "10.1.2.77", prefixLen: 24 },
  { address: "10.1.2.3", prefixLen: 32 },
  { address: "10.1.2.3", prefixLen: 40 },
  { address: "192.168.0.0", prefixLen: 16 },
  { address: "127.0.0.0", prefixLen: 8 },
  { address: "::", prefixLen: 0 },
  { address: "2001:db8::", prefixLen: 32 },
  { address: "2001:db8:1::", prefixLen: 48 },
  { address: "::1", prefixLen: 128 },
];
const ADDRESSES = [
  "10.1.2.3",
  "10.1.2.4",
  "10.1.9.9",
  "10.9.9.9",
  "192.168.1.1",
  "172.16.0.1",
  "127.0.0.1",
  "127.0.0.2",
  "::1",
  "2001:db8:1::5",
  "2001:db8:2::5",
  "fe80::1",
  "::ffff:10.1.2.3",
  "::ffff:127.0.0.1",
];

const range = fc.constantFrom(...RANGES);
const chainSpec: fc.Arbitrary<ChainSpec> = fc.record({
  prefixRanges: fc.array(range, { maxLength: 2 }),
  sourceType: fc.constantFrom(0, 1, 2),
  sourcePrefixRanges: fc.array(range, { maxLength: 2 }),
  sourcePorts: fc.array(fc.constantFrom(1, 2, 3), { maxLength: 2 }),
  transportProtocol: fc.constantFrom("raw_buffer", "raw_buffer", "raw_buffer", "", "tls"),
});
const connection = fc.record({
  localIp: fc.constantFrom(...ADDRESSES),
  remoteIp: fc.constantFrom(...ADDRESSES),
  remotePort: fc.constantFrom(1, 2, 3, 4),
});

function unmap(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

function family(address: string): "ipv4" | "ipv6" {
  return isIPv6(address) ? "ipv6" : "ipv4";
}

function contains(r: Range, address: string): boolean {
  if (family(r.address) !== family(address)) return false;
  const length = Math.min(r.prefixLen, family(r.address) === "ipv4" ? 32 : 128);
  const list = new BlockList();
  list.addSubnet(r.address, length, family(r.address));
  return list.check(address, family(address));
}

function clampedLength(r: Range): number {
  return Math.min(r.prefixLen, family(r.address) === "ipv4" ? 32 : 128);
}

/** The best (longest) range of `ranges` holding `address`: -1 for "no ranges" (matches all), undefined for none. */
function best(ranges: readonly Range[], address: string): number | undefined {
  if (ranges.length === 0) return -1;
  let found: number | undefined;
  for (const r of ranges) if (contains(r, address)) found = Math.max(found ?? -1, clampedLength(r));
  return found;
}

function keepBest(chains: number[], specs: readonly ChainSpec[], pick: (s: ChainSpec) => number | undefined): number[] {
  const scored = chains.map((i) => [i, pick(specs[i]!)] as const).filter(([, score]) => score !== undefined);
  const top = Math.max(...scored.map(([, score]) => score as number));
  return scored.filter(([, score]) => score === top).map(([i]) => i);
}

/** A36's rules read plainly, chain by chain; returns the indexes still tied at the end. */
function mostSpecific(specs: readonly ChainSpec[], conn: { localIp: string; remoteIp: string; remotePort: number }) {
  const local = unmap(conn.localIp);
  const remote = unmap(conn.remoteIp);
  let chains = specs.map((_, i) => i).filter((i) => specs[i]!.transportProtocol === "raw_buffer");
  chains = keepBest(chains, specs, (s) => best(s.prefixRanges, local));
  const loopback = remote === "::1" || (family(remote) === "ipv4" && remote.startsWith("127."));
  const same =
    loopback ||
    remote === local ||
    (isIPv6(remote) && isIPv6(local) && contains({ address: remote, prefixLen: 128 }, local));
  const wanted = same ? 1 : 2;
  chains = chains.some((i) => specs[i]!.sourceType === wanted)
    ? chains.filter((i) => specs[i]!.sourceType === wanted)
    : chains.filter((i) => specs[i]!.sourceType === 0);
  chains = keepBest(chains, specs, (s) => best(s.sourcePrefixRanges, remote));
  const exact = chains.filter((i) => specs[i]!.sourcePorts.includes(conn.remotePort));
  return exact.length > 0 ? exact : chains.filter((i) => specs[i]!.sourcePorts.length === 0);
}

/** Ranges equal once masked and clamped: same family and length, and one's address inside the other. */
function sameRange(a: Range | undefined, b: Range | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return family(a.address) === family(b.address) && clampedLength(a) === clampedLength(b) && contains(a, b.address);
}

/** Whether two points of the chains' Cartesian products are equal once ranges are masked and clamped. */
function hasDuplicates(specs: readonly ChainSpec[]): boolean {
  const points: { d: Range | undefined; type: number; src: Range | undefined; port: number | undefined }[] = [];
  for (const s of specs) {
    if (s.transportProtocol !== "raw_buffer") continue;
    for (const d of s.prefixRanges.length === 0 ? [undefined] : s.prefixRanges) {
      for (const src of s.sourcePrefixRanges.length === 0 ? [undefined] : s.sourcePrefixRanges) {
        for (const port of s.sourcePorts.length === 0 ? [undefined] : s.sourcePorts) {
          const point = { d, type: s.sourceType, src, port };
          const twin = points.some(
            (p) =>
              p.type === point.type && p.port === point.port && sameRange(p.d, point.d) && sameRange(p.src, point.src),
          );
          if (twin) return true;
          points.push(point);
        }
      }
    }
  }
  return false;
}

const hcm = pack(HttpConnectionManagerSchema, {
  routeSpecifier: {
    case: "rds",
    value: { configSource: { configSourceSpecifier: { case: "ads", value: {} } }, routeConfigName: "r" },
  },
  httpFilters: [{ name: "router", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } }],
});

function decodeSpecs(specs: readonly ChainSpec[]) {
  return decodeWith(listenerResourceType, ListenerSchema, {
    name: "l",
    address: {
      address: { case: "socketAddress", value: { address: "::", portSpecifier: { case: "portValue", value: 1 } } },
    },
    filterChains: specs.map(
      (s, i): Init<typeof FilterChainSchema> => ({
        name: `chain-${i}`,
        filterChainMatch: {
          prefixRanges: s.prefixRanges.map((r) => ({ addressPrefix: r.address, prefixLen: r.prefixLen })),
          sourceType: s.sourceType,
          sourcePrefixRanges: s.sourcePrefixRanges.map((r) => ({ addressPrefix: r.address, prefixLen: r.prefixLen })),
          sourcePorts: [...s.sourcePorts],
          transportProtocol: s.transportProtocol,
        },
        filters: [{ name: "hcm", configType: { case: "typedConfig" as const, value: hcm } }],
      }),
    ),
    defaultFilterChain: {
      name: "default",
      filters: [{ name: "hcm", configType: { case: "typedConfig", value: hcm } }],
    },
  });
}

describe("filter chain selection (A36)", () => {
  it("the table picks what a plain most-specific match over the chains as written picks", () => {
    fc.assert(
      fc.property(
        fc.array(chainSpec, { maxLength: 6 }),
        fc.array(connection, { minLength: 1, maxLength: 8 }),
        (specs, conns) => {
          const result = decodeSpecs(specs);
          expect(result.ok, result.ok ? "" : result.error).toBe(!hasDuplicates(specs));
          if (!result.ok) {
            expect(result.error).toContain("duplicate matching rules after normalisation");
            return;
          }
          if (result.value.kind !== "server") throw new Error("expected a server Listener");
          const update = result.value;
          for (const conn of conns) {
            const expected = mostSpecific(specs, conn);
            expect(expected.length).toBeLessThanOrEqual(1);
            const found = lookupFilterChain(update.filterChainTable, conn);
            expect(found?.name).toBe(expected.length === 0 ? undefined : `chain-${expected[0]}`);
            expect(selectFilterChain(update, conn)?.name).toBe(found?.name ?? "default");
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a lookup costs the same with one chain or thousands: it never scans the chains", () => {
    // 4,096 /24 destination ranges: one bucket (one map lookup), whatever the count.
    const specs: ChainSpec[] = Array.from({ length: 4096 }, (_, i) => ({
      prefixRanges: [{ address: `10.${i >> 8}.${i & 255}.0`, prefixLen: 24 }],
      sourceType: 0,
      sourcePrefixRanges: [],
      sourcePorts: [],
      transportProtocol: "raw_buffer",
    }));
    const result = decodeSpecs(specs);
    if (!result.ok || result.value.kind !== "server") throw new Error("expected a server Listener");
    const table = result.value.filterChainTable;
    expect(table.entryCount).toBe(4096);
    expect(table.root.v4.map((b) => [b.prefixLen, b.branches.size])).toEqual([[24, 4096]]);
    expect(lookupFilterChain(table, { localIp: "10.15.255.9", remoteIp: "1.1.1.1", remotePort: 1 })?.name).toBe(
      "chain-4095",
    );
  });
});
