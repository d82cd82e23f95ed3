import type { XdsServerConfig } from "./bootstrap-types.js";
import type { ResourceState } from "./resource-state.js";
import type { XdsChannel } from "./xds-channel.js";

/** name → parameters key → cache entry. */
export type NameTable = Map<string, Map<string, ResourceState>>;

/** One authority's slice of the cache (A47: authority → type → name), and the servers it talks to. */
export interface AuthorityState {
  /** The authority name, or `#old` for old-style names. */
  readonly name: string;
  readonly servers: readonly XdsServerConfig[];
  /** A67: parameters subscribed with by default (bootstrap root map for `#old`, the authority's map otherwise). */
  readonly defaultParameters: Readonly<Record<string, string>>;
  /** type URL → name table. */
  readonly resources: Map<string, NameTable>;
  /**
   * The channels in use, in server priority order: the first server, then each fallback started because every
   * server before it failed while a watched resource was uncached (A71). Never empty.
   */
  readonly active: XdsChannel[];
}

export function* statesOfType(authority: AuthorityState, typeUrl: string): Generator<ResourceState> {
  const table = authority.resources.get(typeUrl);
  if (!table) return;
  for (const byParameters of table.values()) yield* byParameters.values();
}

export function hasSubscriptions(authority: AuthorityState): boolean {
  for (const table of authority.resources.values()) if (table.size > 0) return true;
  return false;
}
