// What the Listener resource type gives: a client Listener (an `api_listener`, what a gRPC channel watches) or a
// server Listener (A36: an `address` and filter chains, which an xDS-enabled server watches under the name its
// bootstrap's `server_listener_resource_name_template` gives, server-listener-name.ts). One type decodes both, as
// gRPC's does; `kind` tells them apart.
import type { Listener } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import type { ConnectionSourceType, FilterChainTable } from "../mesh/filter-chain-types.js";
import type { CidrRange } from "../shared/ip-address.js";
import type { TypedConfig } from "./extension.js";
import type { ServerHttpFilterConfig } from "./http-filter-config.js";
import type { RouteConfigurationBody } from "./route-types.js";
import type { CertificateProviderInstance } from "./upstream-tls.js";

/** A client or a server Listener. */
export type ListenerUpdate = ClientListenerUpdate | ServerListenerUpdate;

/** One entry of a client HTTP filter chain (A39), in order; the last is the router. */
export interface HttpFilter {
  readonly name: string;
  readonly config: TypedConfig;
  readonly isOptional: boolean;
  /** Off unless a route's or virtual host's `typed_per_filter_config` names it without `disabled`. */
  readonly disabled: boolean;
}

/** Where a Listener's routes come from: an RDS resource to watch, or inline. */
export type ListenerRouteSource =
  | { readonly type: "rds"; readonly routeConfigName: string }
  | { readonly type: "inline"; readonly routeConfiguration: RouteConfigurationBody };

/** A client (API) Listener: its HttpConnectionManager as a gRPC client uses it. */
export interface ClientListenerUpdate {
  readonly kind: "client";
  readonly name: string;
  readonly route: ListenerRouteSource;
  readonly httpFilters: readonly HttpFilter[];
  /** A31: `common_http_protocol_options.max_stream_duration`, the default for routes without their own. */
  readonly maxStreamDurationMs?: number;
  /** The decoded message (non-enumerable). */
  readonly raw: Listener;
}

/** `Listener.address`: a TCP `SocketAddress` (checked against the listening address by the server, not here). */
export interface ListenerAddress {
  /** As written (an IP literal for gRPC servers, e.g. `0.0.0.0` or `::`). */
  readonly host: string;
  /** 0-65535. */
  readonly port: number;
}

/**
 * A validated `FilterChainMatch`, as written apart from its ranges (masked and clamped). `matchable` is false when a
 * field that gRPC servers can never satisfy is set (A36): `destination_port`, `server_names`,
 * `application_protocols`, `transport_protocol` other than `raw_buffer` (an empty one included:
 * docs/decisions.md#empty-transport-protocol), or `direct_source_prefix_ranges`; such a chain is validated but never
 * selected.
 */
export interface FilterChainMatch {
  readonly destinationPort?: number;
  readonly prefixRanges: readonly CidrRange[];
  readonly sourceType: ConnectionSourceType;
  readonly sourcePrefixRanges: readonly CidrRange[];
  readonly sourcePorts: readonly number[];
  readonly directSourcePrefixRanges: readonly CidrRange[];
  readonly serverNames: readonly string[];
  readonly transportProtocol: string;
  readonly applicationProtocols: readonly string[];
  readonly matchable: boolean;
}

/**
 * A29 server TLS (a filter chain's `DownstreamTlsContext`). The server presents the identity certificate of
 * `identityCertificate`; with `caCertificates` it asks clients for a certificate and verifies it against those roots,
 * and with `requireClientCertificate` it refuses a client without one.
 */
export interface DownstreamTlsConfig {
  readonly identityCertificate: CertificateProviderInstance;
  /** Roots for client certificates (mTLS); absent: clients are not asked for a certificate. */
  readonly caCertificates?: CertificateProviderInstance;
  /** Only true together with `caCertificates`. */
  readonly requireClientCertificate: boolean;
}

/** One HTTP filter of a server filter chain's HttpConnectionManager, in order; the last is the router. */
export interface ServerHttpFilter {
  readonly name: string;
  /** The filter's config as sent (its type and bytes, or a TypedStruct's JSON). */
  readonly config: TypedConfig;
  readonly isOptional: boolean;
  /** Off unless a route's or virtual host's `typed_per_filter_config` names it without `disabled`. */
  readonly disabled: boolean;
  /** What the server runs. */
  readonly filter: ServerHttpFilterConfig;
}

/** One filter chain of a server Listener: its match, its TLS and its one HttpConnectionManager. */
export interface ServerFilterChain {
  /** `FilterChain.name` (may be empty). */
  readonly name: string;
  /** Index in `filter_chains`; -1 for `default_filter_chain`. */
  readonly index: number;
  /** Undefined for `default_filter_chain` (it has no match). */
  readonly match?: FilterChainMatch;
  /** Absent without a `transport_socket`: the server uses the fallback credentials the application gave. */
  readonly tls?: DownstreamTlsConfig;
  /** Routes from RDS (watch `routeConfigName`) or inline. Routes on servers should carry `non_forwarding_action`. */
  readonly route: ListenerRouteSource;
  readonly httpFilters: readonly ServerHttpFilter[];
}

/** A server Listener (A36), validated as gRPC servers validate it. */
export interface ServerListenerUpdate {
  readonly kind: "server";
  readonly name: string;
  readonly address: ListenerAddress;
  /** Every chain of `filter_chains`, in order, the unmatchable ones included (see `FilterChainMatch.matchable`). */
  readonly filterChains: readonly ServerFilterChain[];
  /** The matchable chains indexed for selection (`selectFilterChain` reads it). */
  readonly filterChainTable: FilterChainTable<ServerFilterChain>;
  readonly defaultFilterChain?: ServerFilterChain;
  /** The decoded message (non-enumerable). */
  readonly raw: Listener;
}
