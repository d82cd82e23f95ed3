// The mesh builders' shapes and their refusals. What they build is decoded by @xdskit/xds-client's resource types in
// packages/xds-client/test/mesh-resources-over-http2.test.ts (xds-client depends on this package, not the reverse).
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { FilterChainMatch_ConnectionSourceType } from "@xdskit/protos/envoy/config/listener/v3/listener_components_pb";
import { RBAC_Action } from "@xdskit/protos/envoy/config/rbac/v3/rbac_pb";
import {
  RBACPerRouteSchema,
  RBACSchema as RbacFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/http/rbac/v3/rbac_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import {
  DownstreamTlsContextSchema,
  UpstreamTlsContextSchema,
} from "@xdskit/protos/envoy/extensions/transport_sockets/tls/v3/tls_pb";
import { describe, expect, test } from "vitest";
import {
  buildCluster,
  buildDownstreamTlsSocket,
  buildRbacFilter,
  buildServerListener,
  buildServerRouteConfiguration,
  buildUpstreamTlsSocket,
  rbacPerRoute,
} from "../src/index.js";

describe("mesh builders", () => {
  test("buildServerListener: address, chains with raw_buffer matches and ranges, TLS, the HCM with the router last", () => {
    const listener = buildServerListener({
      name: "l",
      address: { host: "::", port: 50051 },
      filterChains: [
        {
          name: "c",
          match: { prefixRanges: ["10.0.0.0/8", "2001:db8::1"], sourceType: "EXTERNAL", sourcePorts: [443] },
          tls: { identity: "id", roots: { instanceName: "ca", certificateName: "root" } },
          routeConfigName: "r",
          httpFilters: [buildRbacFilter()],
        },
      ],
    });
    const address = listener.address?.address;
    expect(address?.case === "socketAddress" && address.value.address).toBe("::");
    const chain = listener.filterChains[0]!;
    expect(chain.filterChainMatch?.transportProtocol).toBe("raw_buffer");
    expect(chain.filterChainMatch?.prefixRanges.map((r) => [r.addressPrefix, r.prefixLen])).toEqual([
      ["10.0.0.0", 8],
      ["2001:db8::1", 128],
    ]);
    expect(chain.filterChainMatch?.sourceType).toBe(FilterChainMatch_ConnectionSourceType.EXTERNAL);
    const tlsAny =
      chain.transportSocket?.configType.case === "typedConfig" ? chain.transportSocket.configType.value : undefined;
    const tls = anyUnpack(tlsAny as Any, DownstreamTlsContextSchema);
    expect(tls?.requireClientCertificate).toBe(true);
    expect(tls?.commonTlsContext?.tlsCertificateProviderInstance?.instanceName).toBe("id");
    const filter = chain.filters[0]!;
    const hcm = anyUnpack(
      (filter.configType.case === "typedConfig" ? filter.configType.value : undefined) as Any,
      HttpConnectionManagerSchema,
    );
    expect(hcm?.httpFilters.map((f) => f.name)).toEqual(["envoy.filters.http.rbac", "envoy.filters.http.router"]);
    expect(listener.defaultFilterChain).toBeUndefined();
  });

  test("refuses what gRPC servers would NACK, naming the field", () => {
    expect(() => buildServerListener({ name: "l", address: { host: "::", port: 1 } })).toThrow(
      "buildServerListener(l): give filterChains or a defaultFilterChain",
    );
    expect(() =>
      buildServerListener({
        name: "l",
        address: { host: "::", port: 70000 },
        defaultFilterChain: { routeConfigName: "r" },
      }),
    ).toThrow("buildServerListener(l): address.port: 70000 is not a port");
    expect(() =>
      buildServerListener({
        name: "l",
        address: { host: "::", port: 1 },
        filterChains: [{ match: { prefixRanges: ["ten/8"] }, routeConfigName: "r" }],
      }),
    ).toThrow(
      'buildServerListener(l): filterChains[0].match.prefixRanges[0]: "ten/8" is not an address or address/length',
    );
    expect(() =>
      buildServerListener({
        name: "l",
        address: { host: "::", port: 1 },
        filterChains: [{ routeConfigName: "r", routeConfig: buildServerRouteConfiguration({ name: "x" }) }],
      }),
    ).toThrow("buildServerListener(l): filterChains[0]: give exactly one of routeConfigName and routeConfig");
    expect(() => buildDownstreamTlsSocket({ identity: "id", requireClientCertificate: true })).toThrow(
      "requireClientCertificate needs roots",
    );
  });

  test("buildServerRouteConfiguration: a non_forwarding_action route with per-filter overrides", () => {
    const routes = buildServerRouteConfiguration({
      name: "r",
      typedPerFilterConfig: { rbac: rbacPerRoute({ action: "DENY", policies: {} }) },
    });
    const route = routes.virtualHosts[0]!.routes[0]!;
    expect(route.action.case).toBe("nonForwardingAction");
    const override = anyUnpack(routes.virtualHosts[0]!.typedPerFilterConfig.rbac as Any, RBACPerRouteSchema);
    expect(override?.rbac?.rules?.action).toBe(RBAC_Action.DENY);
    expect(anyUnpack(rbacPerRoute(), RBACPerRouteSchema)?.rbac).toBeUndefined();
  });

  test("buildRbacFilter: the rules as given, or none", () => {
    const filter = buildRbacFilter({
      action: "ALLOW",
      policies: { p: { permissions: [{ rule: { case: "any", value: true } }] } },
    });
    const config = anyUnpack(
      (filter.configType.case === "typedConfig" ? filter.configType.value : undefined) as Any,
      RbacFilterSchema,
    );
    expect(config?.rules?.action).toBe(RBAC_Action.ALLOW);
    expect(Object.keys(config?.rules?.policies ?? {})).toEqual(["p"]);
  });

  test("buildUpstreamTlsSocket on buildCluster: provider or system roots, identity, SAN matchers, SNI", () => {
    const cluster = buildCluster({
      name: "c",
      transportSocket: buildUpstreamTlsSocket({
        roots: "system",
        matchSubjectAltNames: ["a.example"],
        sni: "a.example",
      }),
    });
    const socket = cluster.transportSocket;
    const tls = anyUnpack(
      (socket?.configType.case === "typedConfig" ? socket.configType.value : undefined) as Any,
      UpstreamTlsContextSchema,
    );
    expect(tls?.sni).toBe("a.example");
    const validation = tls?.commonTlsContext?.validationContextType;
    expect(validation?.case).toBe("validationContext");
    if (validation?.case !== "validationContext") return;
    expect(validation.value.systemRootCerts).toBeDefined();
    expect(validation.value.matchSubjectAltNames[0]?.matchPattern).toEqual({ case: "exact", value: "a.example" });
    expect(tls?.commonTlsContext?.tlsCertificateProviderInstance).toBeUndefined();
  });
});
