// A36 filter chain selection: building the lookup table of a server Listener's normalised matches, and the lookup an
// xDS-enabled server runs for every accepted connection. Pure; no I/O. The levels and their order are described on
// FilterChainTable (filter-chain-types.ts).

import type { ServerFilterChain, ServerListenerUpdate } from "../resources/listener-types.js";
import { type CidrRange, type IpValue, isLoopbackIp, networkKey, parseIpValue } from "../shared/ip-address.js";
import type {
  ConnectionAddresses,
  ConnectionSourceType,
  FilterChainMatchEntry,
  FilterChainTable,
  FilterChainTableNode,
  PortLevel,
  PrefixLevel,
} from "./filter-chain-types.js";

const SOURCE_TYPE_INDEX: Readonly<Record<ConnectionSourceType, 0 | 1 | 2>> = {
  ANY: 0,
  SAME_IP_OR_LOOPBACK: 1,
  EXTERNAL: 2,
};

/** A prefix level while it is built: branches by family, prefix length and network key. */
class PrefixBuilder<B> {
  readonly v4 = new Map<number, Map<number, B>>();
  readonly v6 = new Map<number, Map<bigint, B>>();
  unset: B | undefined;

  /** The branch of `range` (undefined: the entries without a range), made by `make` when new. */
  branch(range: CidrRange | undefined, make: () => B): B {
    if (range === undefined) {
      this.unset ??= make();
      return this.unset;
    }
    const network = parseIpValue(range.address) as IpValue;
    const key = networkKey(network, range.prefixLen);
    if (range.family === 4) return getOrMake(this.v4, range.prefixLen, key as number, make);
    return getOrMake(this.v6, range.prefixLen, key as bigint, make);
  }

  freeze<F>(finish: (branch: B) => F): PrefixLevel<F> {
    const buckets = <K>(byLength: Map<number, Map<K, B>>) =>
      Object.freeze(
        [...byLength.entries()]
          .sort(([a], [b]) => b - a)
          .map(([prefixLen, branches]) =>
            Object.freeze({
              prefixLen,
              branches: Object.freeze(
                new Map([...branches].map(([key, branch]) => [key, finish(branch)] as const)),
              ) as ReadonlyMap<K, F>,
            }),
          ),
      );
    return Object.freeze({
      v4: buckets(this.v4),
      v6: buckets(this.v6),
      ...(this.unset === undefined ? {} : { unset: finish(this.unset) }),
    });
  }
}

function getOrMake<K, B>(byLength: Map<number, Map<K, B>>, prefixLen: number, key: K, make: () => B): B {
  let branches = byLength.get(prefixLen);
  if (branches === undefined) {
    branches = new Map();
    byLength.set(prefixLen, branches);
  }
  let branch = branches.get(key);
  if (branch === undefined) {
    branch = make();
    branches.set(key, branch);
  }
  return branch;
}

interface PortBuilder<T> {
  readonly ports: Map<number, { value: T; label: string }>;
  unset: { value: T; label: string } | undefined;
}

type SourceTypes<T> = [PrefixBuilder<PortBuilder<T>>?, PrefixBuilder<PortBuilder<T>>?, PrefixBuilder<PortBuilder<T>>?];

/** One normalised entry to add: where it points, and how errors name the chain it came from. */
export interface FilterChainTableInput<T> {
  readonly entry: FilterChainMatchEntry;
  readonly value: T;
  /** Names the chain in a duplicate report, e.g. `filter_chains[2]`. */
  readonly label: string;
}

/** Two entries that normalise to the same match: the Listener is invalid (A36). */
export interface DuplicateMatch {
  readonly entry: FilterChainMatchEntry;
  /** The label of the entry added first, and of the one that repeats it. */
  readonly first: string;
  readonly second: string;
}

/**
 * Builds the lookup table of `inputs` (each a point of some chain's Cartesian product). Returns the duplicates
 * instead when two inputs normalise to the same match.
 */
export function buildFilterChainTable<T>(
  inputs: readonly FilterChainTableInput<T>[],
):
  | { readonly ok: true; readonly table: FilterChainTable<T> }
  | { readonly ok: false; readonly duplicates: DuplicateMatch[] } {
  const root = new PrefixBuilder<SourceTypes<T>>();
  const duplicates: DuplicateMatch[] = [];
  for (const { entry, value, label } of inputs) {
    const types = root.branch(entry.destination, () => []);
    const index = SOURCE_TYPE_INDEX[entry.sourceType];
    types[index] ??= new PrefixBuilder<PortBuilder<T>>();
    const ports = types[index].branch(entry.source, () => ({ ports: new Map(), unset: undefined }));
    const existing = entry.sourcePort === undefined ? ports.unset : ports.ports.get(entry.sourcePort);
    if (existing !== undefined) {
      duplicates.push({ entry, first: existing.label, second: label });
      continue;
    }
    if (entry.sourcePort === undefined) ports.unset = { value, label };
    else ports.ports.set(entry.sourcePort, { value, label });
  }
  if (duplicates.length > 0) return { ok: false, duplicates };
  const finishPorts = (ports: PortBuilder<T>): PortLevel<T> =>
    Object.freeze({
      ports: Object.freeze(new Map([...ports.ports].map(([port, { value }]) => [port, value] as const))) as ReadonlyMap<
        number,
        T
      >,
      ...(ports.unset === undefined ? {} : { unset: ports.unset.value }),
    });
  const finishSource = (level: PrefixBuilder<PortBuilder<T>> | undefined) => level?.freeze(finishPorts);
  const node: FilterChainTableNode<T> = root.freeze((types) =>
    Object.freeze([finishSource(types[0]), finishSource(types[1]), finishSource(types[2])] as const),
  );
  return { ok: true, table: Object.freeze({ entryCount: inputs.length - duplicates.length, root: node }) };
}

/** The branch of the most specific range holding `ip`, else the branch without a range. */
function pickPrefix<B>(level: PrefixLevel<B>, ip: IpValue | undefined): B | undefined {
  if (ip !== undefined) {
    if (ip.family === 4) {
      for (const bucket of level.v4) {
        const branch = bucket.branches.get(networkKey(ip, bucket.prefixLen) as number);
        if (branch !== undefined) return branch;
      }
    } else {
      for (const bucket of level.v6) {
        const branch = bucket.branches.get(networkKey(ip, bucket.prefixLen) as bigint);
        if (branch !== undefined) return branch;
      }
    }
  }
  return level.unset;
}

/**
 * The value of the filter chain an accepted connection selects, or undefined when none matches (the server then
 * uses the default filter chain, or closes the connection without sending a byte). An address that is not an IP
 * literal matches only entries without a range. IPv4-mapped IPv6 addresses count as IPv4.
 */
export function lookupFilterChain<T>(table: FilterChainTable<T>, connection: ConnectionAddresses): T | undefined {
  const destination = parseIpValue(connection.localIp);
  const types = pickPrefix(table.root, destination);
  if (types === undefined) return undefined;
  const source = parseIpValue(connection.remoteIp);
  const sameOrLoopback =
    source !== undefined &&
    (isLoopbackIp(source) ||
      (destination !== undefined && source.family === destination.family && source.value === destination.value));
  const sources = (sameOrLoopback ? types[1] : types[2]) ?? types[0];
  if (sources === undefined) return undefined;
  const ports = pickPrefix(sources, source);
  if (ports === undefined) return undefined;
  return ports.ports.get(connection.remotePort) ?? ports.unset;
}

/**
 * The filter chain of a server Listener an accepted connection uses: the most specific match, else the default
 * filter chain, else undefined (A36: close the connection without sending a byte).
 */
export function selectFilterChain(
  listener: Pick<ServerListenerUpdate, "filterChainTable" | "defaultFilterChain">,
  connection: ConnectionAddresses,
): ServerFilterChain | undefined {
  return lookupFilterChain(listener.filterChainTable, connection) ?? listener.defaultFilterChain;
}
