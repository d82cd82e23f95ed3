// A36 filter chain selection: the normalised form of a server Listener's FilterChainMatches and the facts of a
// connection that select one. The decoder builds a `FilterChainTable` once per Listener (filter-chain-table.ts:
// `buildFilterChainTable`); an xDS-enabled server calls
// `lookupFilterChain(table: FilterChainTable<T>, connection: ConnectionAddresses): T | undefined` for every
// accepted connection (or `selectFilterChain(listener, connection)`, which falls back to the default filter chain).
import type { CidrRange } from "../shared/ip-address.js";

/** envoy `FilterChainMatch.ConnectionSourceType`. */
export type ConnectionSourceType = "ANY" | "SAME_IP_OR_LOOPBACK" | "EXTERNAL";

/** What the lookup reads of an accepted connection (`socket.localAddress`, `remoteAddress`, `remotePort`). */
export interface ConnectionAddresses {
  /** The address the connection was accepted on (the destination). */
  readonly localIp: string;
  readonly remoteIp: string;
  readonly remotePort: number;
}

/**
 * One point of the Cartesian product of a chain's multi-valued match fields (A36): a destination range or none
 * (`undefined`: any destination), a source type, a source range or none, a source port or none. Ranges are masked
 * and clamped (ip-address.ts#CidrRange). Two entries equal after this normalisation make the Listener invalid.
 */
export interface FilterChainMatchEntry {
  readonly destination?: CidrRange;
  readonly sourceType: ConnectionSourceType;
  readonly source?: CidrRange;
  readonly sourcePort?: number;
}

/**
 * The filter chains of a Listener indexed for selection: most specific destination range (longest prefix, then
 * "no range"), then source type (the connection's own type when some chain names it, else ANY), then most specific
 * source range, then exact source port (else "no port"). Each level picks one branch and never backtracks, as gRPC
 * and envoy do: when the branch it picks holds nothing for the next level, no chain matches. Ranges are looked up by
 * prefix length (one map lookup per distinct length in use), ports by map, so a lookup costs the same with 10 or
 * 10,000 chains. Immutable; `T` is what a match returns (the decoders store the chain itself).
 */
export interface FilterChainTable<T> {
  /** How many normalised entries it holds (every point of every chain's Cartesian product). */
  readonly entryCount: number;
  /** Lookup nodes; read only through `lookupFilterChain`. */
  readonly root: FilterChainTableNode<T>;
}

/** A prefix-indexed level: per family, per prefix length in use (longest first), masked address → branch. */
export interface PrefixLevel<B> {
  readonly v4: readonly { readonly prefixLen: number; readonly branches: ReadonlyMap<number, B> }[];
  readonly v6: readonly { readonly prefixLen: number; readonly branches: ReadonlyMap<bigint, B> }[];
  /** The branch of entries without a range. */
  readonly unset?: B;
}

/** Source ports: exact ports, then the entries without a port. */
export interface PortLevel<T> {
  readonly ports: ReadonlyMap<number, T>;
  readonly unset?: T;
}

/** Destination → source type (index: ANY, SAME_IP_OR_LOOPBACK, EXTERNAL) → source range → source port. */
export type FilterChainTableNode<T> = PrefixLevel<
  readonly [
    PrefixLevel<PortLevel<T>> | undefined,
    PrefixLevel<PortLevel<T>> | undefined,
    PrefixLevel<PortLevel<T>> | undefined,
  ]
>;
