// A36 server Listeners: a TCP `address`, filter chains each holding exactly one network filter (an
// HttpConnectionManager read with the server's HTTP filters) and optionally a DownstreamTlsContext (A29), and a
// `default_filter_chain`. The matchable chains' FilterChainMatches are normalised (Cartesian product of the
// multi-valued fields, ranges masked and clamped) into the lookup table the server consults per connection; two
// entries equal after normalisation make the Listener invalid.
import type { CidrRangeView } from "../gen/envoy/config/core/v3/address_view.js";
import type {
  FilterChainMatchView,
  FilterChainView,
} from "../gen/envoy/config/listener/v3/listener_components_view.js";
import type { ListenerView } from "../gen/envoy/config/listener/v3/listener_view.js";
import { HttpConnectionManagerViewReader } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_view.js";
import { buildFilterChainTable, type FilterChainTableInput } from "../mesh/filter-chain-table.js";
import type { ConnectionSourceType, FilterChainMatchEntry, FilterChainTable } from "../mesh/filter-chain-types.js";
import { type CidrRange, parseCidrRange } from "../shared/ip-address.js";
import type { DecodeContext } from "../wire/resource-type.js";
import { parseDownstreamTls } from "./downstream-tls.js";
import { decodeExtension, extractExtension } from "./extension.js";
import { HCM_TYPE, parseHttpConnectionManager } from "./http-connection-manager.js";
import type {
  FilterChainMatch,
  ListenerAddress,
  ServerFilterChain,
  ServerHttpFilter,
  ServerListenerUpdate,
} from "./listener-types.js";
import { EMPTY, keptList, type ValidationErrors } from "./validation.js";

/**
 * Most normalised match entries one Listener may expand to (the Cartesian product of every chain's destination
 * ranges, source ranges and source ports, summed over chains): a bound on the table's memory
 * (docs/limits.md#server-listeners).
 */
export const MAX_FILTER_CHAIN_ENTRIES = 100_000;

const SOURCE_TYPES: readonly ConnectionSourceType[] = ["ANY", "SAME_IP_OR_LOOPBACK", "EXTERNAL"];
/** `SocketAddress.Protocol.TCP`. */
const TCP = 0;

function parseAddress(view: ListenerView, errors: ValidationErrors): ListenerAddress | undefined {
  const address = view.address?.address;
  if (address === undefined || address.case !== "socketAddress") {
    errors.add("address.socket_address", "field not present");
    return undefined;
  }
  const socket = address.value;
  let ok = true;
  if (socket.protocol !== TCP) {
    errors.add("address.socket_address.protocol", "value must be TCP");
    ok = false;
  }
  const port = socket.portSpecifier;
  if (port.case !== "portValue") {
    errors.add(
      "address.socket_address.port_value",
      port.case === "namedPort" ? "named ports are not supported" : "field not present",
    );
    return undefined;
  }
  if (port.value > 65535) {
    errors.add("address.socket_address.port_value", `invalid port ${port.value}`);
    return undefined;
  }
  return ok ? Object.freeze({ host: socket.address, port: port.value }) : undefined;
}

function parseRanges(views: readonly CidrRangeView[], path: string, errors: ValidationErrors): readonly CidrRange[] {
  if (views.length === 0) return EMPTY;
  const ranges: CidrRange[] = [];
  for (let i = 0; i < views.length; i++) {
    const range = parseCidrRange(views[i]!.addressPrefix, views[i]!.prefixLen);
    if (typeof range === "string") errors.add(`${path}[${i}].address_prefix`, range);
    else ranges.push(range);
  }
  return keptList(ranges);
}

function parseMatch(view: FilterChainMatchView | undefined, path: string, errors: ValidationErrors): FilterChainMatch {
  const sourceType = SOURCE_TYPES[view?.sourceType ?? 0];
  if (sourceType === undefined) errors.add(`${path}.source_type`, `unknown source type ${view?.sourceType}`);
  const match = {
    ...(view?.destinationPort === undefined ? {} : { destinationPort: view.destinationPort }),
    prefixRanges: parseRanges(view?.prefixRanges ?? EMPTY, `${path}.prefix_ranges`, errors),
    sourceType: sourceType ?? "ANY",
    sourcePrefixRanges: parseRanges(view?.sourcePrefixRanges ?? EMPTY, `${path}.source_prefix_ranges`, errors),
    sourcePorts: view === undefined || view.sourcePorts.length === 0 ? EMPTY : Object.freeze([...view.sourcePorts]),
    directSourcePrefixRanges: parseRanges(
      view?.directSourcePrefixRanges ?? EMPTY,
      `${path}.direct_source_prefix_ranges`,
      errors,
    ),
    serverNames: view === undefined || view.serverNames.length === 0 ? EMPTY : Object.freeze([...view.serverNames]),
    transportProtocol: view?.transportProtocol ?? "",
    applicationProtocols:
      view === undefined || view.applicationProtocols.length === 0
        ? EMPTY
        : Object.freeze([...view.applicationProtocols]),
  };
  // A36: fields that need features gRPC servers lack (use_original_dst, listener filters) never match; an empty
  // transport_protocol never matches either (docs/decisions.md#empty-transport-protocol).
  const matchable =
    match.destinationPort === undefined &&
    match.serverNames.length === 0 &&
    match.transportProtocol === "raw_buffer" &&
    match.applicationProtocols.length === 0 &&
    match.directSourcePrefixRanges.length === 0;
  return Object.freeze({ ...match, matchable });
}

/** One filter chain; `index` -1 is `default_filter_chain`. Undefined (after reporting) when invalid. */
function parseFilterChain(
  view: FilterChainView,
  index: number,
  path: string,
  context: DecodeContext,
  errors: ValidationErrors,
): ServerFilterChain | undefined {
  const before = errors.count;
  const match = parseMatch(view.filterChainMatch, `${path}.filter_chain_match`, errors);
  const filtersPath = `${path}.filters`;
  if (view.filters.length !== 1) {
    errors.add(filtersPath, "must have exactly one filter (HttpConnectionManager -- no other filter is supported)");
  }
  let hcm: ReturnType<typeof parseHttpConnectionManager<ServerHttpFilter>>;
  for (let i = 0; i < view.filters.length; i++) {
    const filter = view.filters[i]!;
    const typedConfig = filter.configType.case === "typedConfig" ? filter.configType.value : undefined;
    const extension = extractExtension(typedConfig, `${filtersPath}[${i}].typed_config`, errors);
    if (extension === undefined) continue;
    if (extension.type !== HCM_TYPE) {
      errors.add(extension.path, "unsupported network filter type (only HttpConnectionManager)");
      continue;
    }
    const hcmView = decodeExtension(extension, HttpConnectionManagerViewReader);
    if (hcmView === undefined) {
      errors.add(extension.path, "could not parse HttpConnectionManager config");
      continue;
    }
    hcm = parseHttpConnectionManager<ServerHttpFilter>(hcmView, extension.path, "server", context, errors);
  }
  const tls =
    view.transportSocket === undefined
      ? undefined
      : parseDownstreamTls(view.transportSocket, `${path}.transport_socket`, context.bootstrap, errors);
  if (errors.count !== before || hcm === undefined) return undefined;
  return Object.freeze({
    name: view.name,
    index,
    ...(index < 0 ? {} : { match }),
    ...(tls === undefined ? {} : { tls }),
    route: hcm.route,
    httpFilters: hcm.httpFilters,
  });
}

function describeRange(range: CidrRange | undefined): string {
  return range === undefined ? "any" : `${range.address}/${range.prefixLen}`;
}

function describeEntry(entry: FilterChainMatchEntry): string {
  return (
    `destination ${describeRange(entry.destination)}, source type ${entry.sourceType}, ` +
    `source ${describeRange(entry.source)}, source port ${entry.sourcePort ?? "any"}`
  );
}

/** The normalised entries of the matchable chains, or undefined (after reporting) past MAX_FILTER_CHAIN_ENTRIES. */
function tableInputs(
  chains: readonly ServerFilterChain[],
  errors: ValidationErrors,
): FilterChainTableInput<ServerFilterChain>[] | undefined {
  let total = 0;
  for (const chain of chains) {
    const match = chain.match;
    if (match === undefined || !match.matchable) continue;
    total +=
      Math.max(1, match.prefixRanges.length) *
      Math.max(1, match.sourcePrefixRanges.length) *
      Math.max(1, match.sourcePorts.length);
  }
  if (total > MAX_FILTER_CHAIN_ENTRIES) {
    errors.add(
      "filter_chains",
      `the filter chain matches expand to ${total} entries, more than the ${MAX_FILTER_CHAIN_ENTRIES} allowed`,
    );
    return undefined;
  }
  const inputs: FilterChainTableInput<ServerFilterChain>[] = [];
  for (const chain of chains) {
    const match = chain.match;
    if (match === undefined || !match.matchable) continue;
    const label = `filter_chains[${chain.index}]`;
    const destinations = match.prefixRanges.length === 0 ? [undefined] : match.prefixRanges;
    const sources = match.sourcePrefixRanges.length === 0 ? [undefined] : match.sourcePrefixRanges;
    const ports = match.sourcePorts.length === 0 ? [undefined] : match.sourcePorts;
    for (const destination of destinations) {
      for (const source of sources) {
        for (const sourcePort of ports) {
          const entry: FilterChainMatchEntry = {
            ...(destination === undefined ? {} : { destination }),
            sourceType: match.sourceType,
            ...(source === undefined ? {} : { source }),
            ...(sourcePort === undefined ? {} : { sourcePort }),
          };
          inputs.push({ entry, value: chain, label });
        }
      }
    }
  }
  return inputs;
}

function buildTable(
  chains: readonly ServerFilterChain[],
  errors: ValidationErrors,
): FilterChainTable<ServerFilterChain> | undefined {
  const inputs = tableInputs(chains, errors);
  if (inputs === undefined) return undefined;
  const built = buildFilterChainTable(inputs);
  if (built.ok) return built.table;
  for (const duplicate of built.duplicates) {
    const same = duplicate.first === duplicate.second ? "twice in the same chain" : `as ${duplicate.first}`;
    errors.add(
      `${duplicate.second}.filter_chain_match`,
      `duplicate matching rules after normalisation (${same}): ${describeEntry(duplicate.entry)}`,
    );
  }
  return undefined;
}

/** Validates a server Listener (one with an `address` and no `api_listener`). */
export function parseServerListener(
  view: ListenerView,
  context: DecodeContext,
  errors: ValidationErrors,
): Omit<ServerListenerUpdate, "kind" | "name" | "raw"> | undefined {
  const address = parseAddress(view, errors);
  if (view.useOriginalDst === true) errors.add("use_original_dst", "field not supported (A36)");
  if (view.listenerFilters.length > 0) errors.add("listener_filters", "listener filters are not supported (A36)");
  const chains: ServerFilterChain[] = [];
  for (let i = 0; i < view.filterChains.length; i++) {
    const chain = parseFilterChain(view.filterChains[i]!, i, `filter_chains[${i}]`, context, errors);
    if (chain !== undefined) chains.push(chain);
  }
  let defaultFilterChain: ServerFilterChain | undefined;
  if (view.defaultFilterChain !== undefined) {
    defaultFilterChain = parseFilterChain(view.defaultFilterChain, -1, "default_filter_chain", context, errors);
  } else if (view.filterChains.length === 0) {
    errors.add("default_filter_chain", "must be set if filter_chains is unset");
  }
  if (!errors.ok) return undefined;
  const filterChainTable = buildTable(chains, errors);
  if (address === undefined || filterChainTable === undefined) return undefined;
  return {
    address,
    filterChains: keptList(chains),
    filterChainTable,
    ...(defaultFilterChain === undefined ? {} : { defaultFilterChain }),
  };
}
