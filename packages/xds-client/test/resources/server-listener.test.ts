// Server Listeners (A36) through the Listener resource type: what is accepted, what each NACK names, and how the
// filter chains are normalised into the lookup table.

import type {
  FilterChainMatchSchema,
  FilterChainSchema,
} from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RBACSchema as RbacFilterSchema } from "@xdskit/protos/envoy/extensions/filters/http/rbac/v3/rbac_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import {
  HttpConnectionManagerSchema,
  type HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { DownstreamTlsContextSchema } from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";
import { describe, expect, it } from "vitest";
import { selectFilterChain } from "../../src/mesh/filter-chain-table.js";
import { type ListenerUpdate, listenerResourceType, type ServerListenerUpdate } from "../../src/resources/index.js";
import type { DecodeResult } from "../../src/wire/resource-type.js";
import { decodeWith, expectError, expectOk, type Init, isDeeplyFrozen, pack } from "./context.js";

type ChainInit = Init<typeof FilterChainSchema>;
type MatchInit = Init<typeof FilterChainMatchSchema>;
type HcmInit = Init<typeof HttpConnectionManagerSchema>;
type FilterInit = Init<typeof HttpFilterSchema>;
type ListenerInit = Init<typeof ListenerSchema>;

const HCM = "typed_config.value[envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager]";
const TLS = "transport_socket.typed_config.value[envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext]";

const router: FilterInit = { name: "router", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } };
const rds: NonNullable<HcmInit["routeSpecifier"]> = {
  case: "rds",
  value: { configSource: { configSourceSpecifier: { case: "ads", value: {} } }, routeConfigName: "server-routes" },
};

function hcmFilter(init: HcmInit = {}) {
  return {
    name: "hcm",
    configType: {
      case: "typedConfig" as const,
      value: pack(HttpConnectionManagerSchema, { routeSpecifier: rds, httpFilters: [router], ...init }),
    },
  };
}

/** A filter chain matching raw_buffer connections (plus `match`), with one HttpConnectionManager. */
function chain(match: MatchInit = {}, init: ChainInit = {}): ChainInit {
  return { filterChainMatch: { transportProtocol: "raw_buffer", ...match }, filters: [hcmFilter()], ...init };
}

function listener(init: ListenerInit = {}): ListenerInit {
  return {
    name: "grpc/server?xds.resource.listening_address=0.0.0.0:8080",
    address: {
      address: {
        case: "socketAddress",
        value: { address: "0.0.0.0", portSpecifier: { case: "portValue", value: 8080 } },
      },
    },
    filterChains: [chain()],
    ...init,
  };
}

function decode(init: ListenerInit): DecodeResult<ListenerUpdate> {
  return decodeWith(listenerResourceType, ListenerSchema, init);
}

function expectServer(result: DecodeResult<ListenerUpdate>): ServerListenerUpdate {
  const update = expectOk(result);
  if (update.kind !== "server") throw new Error(`expected a server Listener, got a ${update.kind} one`);
  return update;
}

const conn = (localIp: string, remoteIp: string, remotePort = 40000) => ({ localIp, remoteIp, remotePort });

const cidr = (addressPrefix: string, prefixLen?: number) => ({
  addressPrefix,
  ...(prefixLen === undefined ? {} : { prefixLen }),
});

describe("server Listeners (A36)", () => {
  it("decodes address, chains, default chain and their HttpConnectionManagers into a frozen update", () => {
    const update = expectServer(
      decode(
        listener({
          filterChains: [chain({ prefixRanges: [cidr("10.1.2.3", 16)] }, { name: "internal" })],
          defaultFilterChain: { filters: [hcmFilter()], name: "fallback" },
        }),
      ),
    );
    expect(update.kind).toBe("server");
    expect(update.address).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(update.filterChains).toHaveLength(1);
    const first = update.filterChains[0]!;
    expect(first).toMatchObject({
      name: "internal",
      index: 0,
      route: { type: "rds", routeConfigName: "server-routes" },
    });
    expect(first.match?.prefixRanges).toEqual([{ family: 4, address: "10.1.0.0", prefixLen: 16 }]);
    expect(first.match?.matchable).toBe(true);
    expect(first.httpFilters.map((f) => [f.name, f.filter])).toEqual([["router", { type: "router" }]]);
    expect(update.defaultFilterChain).toMatchObject({ name: "fallback", index: -1 });
    expect(update.defaultFilterChain?.match).toBeUndefined();
    expect(update.filterChainTable.entryCount).toBe(1);
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.keys(update)).not.toContain("raw");
    expect(selectFilterChain(update, conn("10.1.9.9", "10.2.0.1"))?.name).toBe("internal");
    expect(selectFilterChain(update, conn("10.2.0.1", "10.2.0.1"))?.name).toBe("fallback");
  });

  it("accepts a Listener with only a default_filter_chain, and an inline route_config", () => {
    const update = expectServer(
      decode(
        listener({
          filterChains: [],
          defaultFilterChain: {
            filters: [
              hcmFilter({
                routeSpecifier: {
                  case: "routeConfig",
                  value: {
                    virtualHosts: [
                      {
                        domains: ["*"],
                        routes: [
                          {
                            match: { pathSpecifier: { case: "prefix", value: "" } },
                            action: { case: "nonForwardingAction", value: {} },
                          },
                        ],
                      },
                    ],
                  },
                },
              }),
            ],
          },
        }),
      ),
    );
    expect(update.defaultFilterChain?.route).toMatchObject({
      type: "inline",
      routeConfiguration: { virtualHosts: [{ routes: [{ action: { type: "non_forwarding" } }] }] },
    });
    expect(selectFilterChain(update, conn("1.2.3.4", "5.6.7.8"))?.index).toBe(-1);
  });

  describe("NACKs, naming the field", () => {
    const cases: [string, ListenerInit, string][] = [
      ["use_original_dst", listener({ useOriginalDst: true }), "use_original_dst: field not supported (A36)"],
      [
        "listener_filters",
        listener({ listenerFilters: [{ name: "tls_inspector" }] }),
        "listener_filters: listener filters are not supported (A36)",
      ],
      [
        "an address that is not a socket address",
        listener({ address: { address: { case: "pipe", value: { path: "/tmp/s" } } } }),
        "address.socket_address: field not present",
      ],
      [
        "a UDP address",
        listener({
          address: {
            address: {
              case: "socketAddress",
              value: { protocol: 1, address: "0.0.0.0", portSpecifier: { case: "portValue", value: 1 } },
            },
          },
        }),
        "address.socket_address.protocol: value must be TCP",
      ],
      [
        "a port past 65535",
        listener({
          address: {
            address: {
              case: "socketAddress",
              value: { address: "::", portSpecifier: { case: "portValue", value: 70000 } },
            },
          },
        }),
        "address.socket_address.port_value: invalid port 70000",
      ],
      [
        "a named port",
        listener({
          address: {
            address: {
              case: "socketAddress",
              value: { address: "::", portSpecifier: { case: "namedPort", value: "grpc" } },
            },
          },
        }),
        "address.socket_address.port_value: named ports are not supported",
      ],
      [
        "no filter chain and no default",
        listener({ filterChains: [] }),
        "default_filter_chain: must be set if filter_chains is unset",
      ],
      [
        "a chain with two network filters",
        listener({ filterChains: [chain({}, { filters: [hcmFilter(), hcmFilter()] })] }),
        "filter_chains[0].filters: must have exactly one filter (HttpConnectionManager -- no other filter is supported)",
      ],
      [
        "a chain with no network filter",
        listener({ filterChains: [chain({}, { filters: [] })] }),
        "filter_chains[0].filters: must have exactly one filter (HttpConnectionManager -- no other filter is supported)",
      ],
      [
        "a network filter other than the HttpConnectionManager",
        listener({
          filterChains: [
            chain({}, { filters: [{ name: "x", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } }] }),
          ],
        }),
        "filter_chains[0].filters[0].typed_config.value[envoy.extensions.filters.http.router.v3.Router]: unsupported network filter type (only HttpConnectionManager)",
      ],
      [
        "duplicate HTTP filter names",
        listener({ filterChains: [chain({}, { filters: [hcmFilter({ httpFilters: [router, router] })] })] }),
        `filter_chains[0].filters[0].${HCM}.http_filters[1].name: duplicate HTTP filter name: router`,
      ],
      [
        "the router not last",
        listener({
          filterChains: [
            chain(
              {},
              {
                filters: [
                  hcmFilter({
                    httpFilters: [
                      router,
                      { name: "rbac", configType: { case: "typedConfig", value: pack(RbacFilterSchema, {}) } },
                    ],
                  }),
                ],
              },
            ),
          ],
        }),
        `filter_chains[0].filters[0].${HCM}.http_filters: terminal filter for config type envoy.extensions.filters.http.router.v3.Router must be the last filter in the chain; filter_chains[0].filters[0].${HCM}.http_filters: non-terminal filter for config type envoy.extensions.filters.http.rbac.v3.RBAC is the last filter in the chain`,
      ],
      [
        "a client-only HTTP filter (fault) that is not optional",
        listener({
          filterChains: [
            chain(
              {},
              {
                filters: [
                  hcmFilter({
                    httpFilters: [
                      {
                        name: "fault",
                        configType: {
                          case: "typedConfig",
                          value: {
                            typeUrl: "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault",
                            value: new Uint8Array(),
                          },
                        },
                      },
                      router,
                    ],
                  }),
                ],
              },
            ),
          ],
        }),
        `filter_chains[0].filters[0].${HCM}.http_filters[0].typed_config.value[envoy.extensions.filters.http.fault.v3.HTTPFault]: filter is not supported on servers`,
      ],
      [
        "an unknown HTTP filter that is not optional",
        listener({
          filterChains: [
            chain(
              {},
              {
                filters: [
                  hcmFilter({
                    httpFilters: [
                      {
                        name: "x",
                        configType: {
                          case: "typedConfig",
                          value: { typeUrl: "type.googleapis.com/x.Y", value: new Uint8Array() },
                        },
                      },
                      router,
                    ],
                  }),
                ],
              },
            ),
          ],
        }),
        `filter_chains[0].filters[0].${HCM}.http_filters[0].typed_config.value[x.Y]: unsupported filter type`,
      ],
      [
        "xff_num_trusted_hops (A41)",
        listener({ filterChains: [chain({}, { filters: [hcmFilter({ xffNumTrustedHops: 1 })] })] }),
        `filter_chains[0].filters[0].${HCM}.xff_num_trusted_hops: must be zero`,
      ],
      [
        "original_ip_detection_extensions (A41)",
        listener({
          filterChains: [chain({}, { filters: [hcmFilter({ originalIpDetectionExtensions: [{ name: "xff" }] })] })],
        }),
        `filter_chains[0].filters[0].${HCM}.original_ip_detection_extensions: must be empty`,
      ],
      [
        "a prefix range that is not an IP",
        listener({ filterChains: [chain({ prefixRanges: [cidr("10.0.0.300", 8)] })] }),
        'filter_chains[0].filter_chain_match.prefix_ranges[0].address_prefix: "10.0.0.300" is not an IP address',
      ],
      [
        "a source range that is not an IP",
        listener({ filterChains: [chain({ sourcePrefixRanges: [cidr("host.example", 8)] })] }),
        'filter_chains[0].filter_chain_match.source_prefix_ranges[0].address_prefix: "host.example" is not an IP address',
      ],
      [
        "duplicate matches in two chains",
        listener({
          filterChains: [
            chain({ prefixRanges: [cidr("10.0.0.0", 8)] }),
            chain({ prefixRanges: [cidr("10.9.9.9", 8)] }),
          ],
        }),
        "filter_chains[1].filter_chain_match: duplicate matching rules after normalisation (as filter_chains[0]): destination 10.0.0.0/8, source type ANY, source any, source port any",
      ],
      [
        "duplicate matches within one chain's Cartesian product",
        listener({ filterChains: [chain({ sourcePorts: [443, 443] })] }),
        "filter_chains[0].filter_chain_match: duplicate matching rules after normalisation (twice in the same chain): destination any, source type ANY, source any, source port 443",
      ],
      [
        "a default filter chain that is invalid",
        listener({ defaultFilterChain: { filters: [] } }),
        "default_filter_chain.filters: must have exactly one filter (HttpConnectionManager -- no other filter is supported)",
      ],
    ];
    for (const [what, init, error] of cases) {
      it(what, () => expectError(decode(init), error, init.name));
    }

    it("too many normalised entries, checked before the product is built", () => {
      const many = Array.from({ length: 100 }, (_, i) => cidr(`10.${i}.0.0`, 16));
      const ports = Array.from({ length: 11 }, (_, i) => 1000 + i);
      const result = decode(
        listener({ filterChains: [chain({ prefixRanges: many, sourcePrefixRanges: many, sourcePorts: ports })] }),
      );
      expectError(
        result,
        "filter_chains: the filter chain matches expand to 110000 entries, more than the 100000 allowed",
      );
    });
  });

  describe("FilterChainMatch normalisation", () => {
    it("masks and clamps ranges; an unset prefix_len is 0 and /0 keeps its family", () => {
      const update = expectServer(
        decode(
          listener({
            filterChains: [
              chain({ prefixRanges: [cidr("192.168.77.1", 99)], sourcePrefixRanges: [cidr("2001:db8::1", 32)] }),
              chain({ prefixRanges: [cidr("10.0.0.1")] }),
            ],
          }),
        ),
      );
      expect(update.filterChains[0]!.match?.prefixRanges).toEqual([
        { family: 4, address: "192.168.77.1", prefixLen: 32 },
      ]);
      expect(update.filterChains[0]!.match?.sourcePrefixRanges).toEqual([
        { family: 6, address: "2001:db8::", prefixLen: 32 },
      ]);
      expect(update.filterChains[1]!.match?.prefixRanges).toEqual([{ family: 4, address: "0.0.0.0", prefixLen: 0 }]);
      // 0.0.0.0/0 holds IPv4 destinations only: an IPv6 destination matches no chain.
      expect(selectFilterChain(update, conn("10.9.9.9", "10.1.1.1"))?.index).toBe(1);
      expect(selectFilterChain(update, conn("2001:db8::5", "2001:db8::6"))).toBeUndefined();
    });

    it("keeps chains gRPC servers can never match, but never selects them", () => {
      const unmatchable: [string, MatchInit][] = [
        ["destination_port", { destinationPort: 8080 }],
        ["server_names", { serverNames: ["a.example"] }],
        ["application_protocols", { applicationProtocols: ["h2"] }],
        ["transport_protocol tls", { transportProtocol: "tls" }],
        ["direct_source_prefix_ranges", { directSourcePrefixRanges: [cidr("10.0.0.0", 8)] }],
      ];
      for (const [what, match] of unmatchable) {
        const update = expectServer(decode(listener({ filterChains: [chain(match)] })));
        expect(update.filterChains[0]!.match?.matchable, what).toBe(false);
        expect(update.filterChainTable.entryCount, what).toBe(0);
        expect(selectFilterChain(update, conn("10.0.0.1", "10.0.0.2")), what).toBeUndefined();
      }
    });

    it("an empty transport_protocol never matches (docs/decisions.md#empty-transport-protocol)", () => {
      // grpc-go and C-core read "" as a wildcard; A36 lists transport_protocol as matching "raw_buffer" only.
      const update = expectServer(
        decode(listener({ filterChains: [{ filters: [hcmFilter()] }, chain({ transportProtocol: "" })] })),
      );
      expect(update.filterChains.map((c) => c.match?.matchable)).toEqual([false, false]);
      expect(selectFilterChain(update, conn("127.0.0.1", "127.0.0.1"))).toBeUndefined();
    });

    it("unmatchable chains do not count as duplicates", () => {
      const update = expectServer(
        decode(listener({ filterChains: [chain(), chain({ serverNames: ["x"] }), chain({ destinationPort: 1 })] })),
      );
      expect(update.filterChainTable.entryCount).toBe(1);
    });

    it("selects the most specific chain level by level: destination, source type, source, source port", () => {
      const update = expectServer(
        decode(
          listener({
            filterChains: [
              chain({}, { name: "any" }),
              chain({ prefixRanges: [cidr("10.0.0.0", 8)] }, { name: "dst8" }),
              chain({ prefixRanges: [cidr("10.1.0.0", 16)] }, { name: "dst16" }),
              chain({ prefixRanges: [cidr("10.1.0.0", 16)], sourceType: 1 }, { name: "dst16-local" }),
              chain(
                { prefixRanges: [cidr("10.1.0.0", 16)], sourcePrefixRanges: [cidr("192.168.0.0", 16)] },
                { name: "dst16-src16" },
              ),
              chain(
                {
                  prefixRanges: [cidr("10.1.0.0", 16)],
                  sourcePrefixRanges: [cidr("192.168.0.0", 16)],
                  sourcePorts: [443],
                },
                { name: "dst16-src16-443" },
              ),
              chain({ prefixRanges: [cidr("10.2.0.0", 16)], sourceType: 2 }, { name: "dst16b-external" }),
            ],
          }),
        ),
      );
      const pick = (local: string, remote: string, port = 1) =>
        selectFilterChain(update, conn(local, remote, port))?.name;
      expect(pick("172.16.0.1", "172.16.0.2")).toBe("any");
      expect(pick("10.9.0.1", "172.16.0.2")).toBe("dst8");
      expect(pick("10.1.0.1", "172.16.0.2")).toBe("dst16");
      expect(pick("10.1.0.1", "127.0.0.1")).toBe("dst16-local");
      expect(pick("10.1.0.1", "10.1.0.1")).toBe("dst16-local");
      expect(pick("10.1.0.1", "::ffff:127.0.0.1")).toBe("dst16-local");
      expect(pick("10.1.0.1", "192.168.3.4")).toBe("dst16-src16");
      expect(pick("10.1.0.1", "::ffff:192.168.3.4", 443)).toBe("dst16-src16-443");
      // The most specific destination holds only EXTERNAL chains: a local peer falls to ANY, which it lacks. No
      // backtracking to a less specific destination.
      expect(pick("10.2.0.1", "172.16.0.2")).toBe("dst16b-external");
      expect(pick("10.2.0.1", "127.0.0.1")).toBeUndefined();
    });
  });

  describe("DownstreamTlsContext (A29)", () => {
    type TlsInit = Init<typeof DownstreamTlsContextSchema>;
    const withTls = (tls: TlsInit) =>
      listener({
        filterChains: [
          chain(
            {},
            {
              transportSocket: {
                name: "tls",
                configType: { case: "typedConfig", value: pack(DownstreamTlsContextSchema, tls) },
              },
            },
          ),
        ],
      });
    const identity = { tlsCertificateProviderInstance: { instanceName: "id_provider" } };
    const roots = {
      validationContextType: {
        case: "validationContext" as const,
        value: { caCertificateProviderInstance: { instanceName: "ca_provider" } },
      },
    };

    it("reads the identity, the roots and require_client_certificate", () => {
      const update = expectServer(
        decode(withTls({ commonTlsContext: { ...identity, ...roots }, requireClientCertificate: true })),
      );
      expect(update.filterChains[0]!.tls).toEqual({
        identityCertificate: { instanceName: "id_provider", certificateName: "" },
        caCertificates: { instanceName: "ca_provider", certificateName: "" },
        requireClientCertificate: true,
      });
      const plain = expectServer(decode(listener()));
      expect(plain.filterChains[0]!.tls).toBeUndefined();
      const tlsOnly = expectServer(decode(withTls({ commonTlsContext: identity })));
      expect(tlsOnly.filterChains[0]!.tls).toEqual({
        identityCertificate: { instanceName: "id_provider", certificateName: "" },
        requireClientCertificate: false,
      });
    });

    const nacks: [string, TlsInit, string][] = [
      [
        "no identity",
        { commonTlsContext: roots },
        `filter_chains[0].${TLS}.common_tls_context: TLS configuration provided but no tls_certificate_provider_instance found`,
      ],
      [
        "require_client_certificate without roots",
        { commonTlsContext: identity, requireClientCertificate: true },
        `filter_chains[0].${TLS}.require_client_certificate: client certificate required but no certificate provider instance specified for validation`,
      ],
      [
        "require_sni",
        { commonTlsContext: identity, requireSni: true },
        `filter_chains[0].${TLS}.require_sni: field unsupported`,
      ],
      [
        "an OCSP policy other than lenient stapling",
        { commonTlsContext: identity, ocspStaplePolicy: 1 },
        `filter_chains[0].${TLS}.ocsp_staple_policy: value must be LENIENT_STAPLING`,
      ],
      [
        "an unknown instance name",
        { commonTlsContext: { tlsCertificateProviderInstance: { instanceName: "nope" } } },
        `filter_chains[0].${TLS}.common_tls_context.tls_certificate_provider_instance.instance_name: unrecognized certificate provider instance name: nope`,
      ],
      [
        "tls_params",
        { commonTlsContext: { ...identity, tlsParams: {} } },
        `filter_chains[0].${TLS}.common_tls_context.tls_params: feature unsupported`,
      ],
      [
        "SDS for the identity",
        { commonTlsContext: { tlsCertificateSdsSecretConfigs: [{ name: "s" }] } },
        `filter_chains[0].${TLS}.common_tls_context.tls_certificate_sds_secret_configs: feature unsupported; filter_chains[0].${TLS}.common_tls_context: TLS configuration provided but no tls_certificate_provider_instance found`,
      ],
      [
        "SDS for the validation context",
        {
          commonTlsContext: {
            ...identity,
            validationContextType: { case: "validationContextSdsSecretConfig", value: { name: "s" } },
          },
        },
        `filter_chains[0].${TLS}.common_tls_context.validation_context_sds_secret_config: feature unsupported`,
      ],
      ...(
        [
          ["verify_certificate_spki", { verifyCertificateSpki: ["x"] }],
          ["verify_certificate_hash", { verifyCertificateHash: ["x"] }],
          ["crl", { crl: {} }],
          ["custom_validator_config", { customValidatorConfig: { name: "v" } }],
        ] satisfies [string, object][]
      ).map(([field, value]): [string, TlsInit, string] => [
        field,
        {
          commonTlsContext: {
            ...identity,
            validationContextType: {
              case: "validationContext",
              value: { caCertificateProviderInstance: { instanceName: "ca_provider" }, ...value },
            },
          },
        },
        `filter_chains[0].${TLS}.common_tls_context.validation_context.${field}: feature unsupported`,
      ]),
      [
        "SAN matchers on a server",
        {
          commonTlsContext: {
            ...identity,
            validationContextType: {
              case: "validationContext",
              value: {
                caCertificateProviderInstance: { instanceName: "ca_provider" },
                matchSubjectAltNames: [{ matchPattern: { case: "exact", value: "x" } }],
              },
            },
          },
        },
        `filter_chains[0].${TLS}.common_tls_context: match_subject_alt_names not supported on servers`,
      ],
      [
        "system roots on a server",
        {
          commonTlsContext: {
            ...identity,
            validationContextType: { case: "validationContext", value: { systemRootCerts: {} } },
          },
        },
        `filter_chains[0].${TLS}.common_tls_context: system_root_certs not supported on servers`,
      ],
    ];
    for (const [what, tls, error] of nacks) it(`NACKs ${what}`, () => expectError(decode(withTls(tls)), error));

    it("NACKs a transport socket that is not a DownstreamTlsContext", () => {
      const result = decode(
        listener({
          filterChains: [
            chain(
              {},
              { transportSocket: { name: "x", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } } },
            ),
          ],
        }),
      );
      expectError(result, "filter_chains[0].transport_socket.typed_config.type_url: unsupported transport socket type");
    });
  });
});
