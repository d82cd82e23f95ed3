import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import {
  HttpConnectionManagerSchema,
  type HttpFilterSchema,
} from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { describe, expect, it } from "vitest";
import { type ClientListenerUpdate, type ListenerUpdate, listenerResourceType } from "../../src/resources/index.js";
import type { DecodeResult } from "../../src/wire/resource-type.js";
import { context, decodeWith, expectError, expectOk, type Init, isDeeplyFrozen, pack } from "./context.js";
import { typedStruct } from "./typed-struct.js";

type HcmInit = Init<typeof HttpConnectionManagerSchema>;
type FilterInit = Init<typeof HttpFilterSchema>;

const HCM =
  "api_listener.api_listener.value[envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager]";
const FAULT = "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault";
const RBAC = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC";
const opaque = (typeUrl: string) => ({ typeUrl, value: new Uint8Array([8, 1]) });
const fault = (): FilterInit => ({ name: "fault", configType: { case: "typedConfig", value: opaque(FAULT) } });

const router: FilterInit = { name: "router", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } };
const ads = { configSourceSpecifier: { case: "ads", value: {} } } as const;
const rds = { case: "rds", value: { configSource: ads, routeConfigName: "rc-1" } } as const;

function hcm(init: HcmInit = {}): HcmInit {
  return { routeSpecifier: rds, httpFilters: [router], ...init };
}

function decode(init: HcmInit) {
  return decodeWith(listenerResourceType, ListenerSchema, {
    name: "listener-a",
    apiListener: { apiListener: pack(HttpConnectionManagerSchema, init) },
  });
}

/** The update of a client Listener (an api_listener). */
function expectClient(result: DecodeResult<ListenerUpdate>): ClientListenerUpdate {
  const update = expectOk(result);
  if (update.kind !== "client") throw new Error(`expected a client Listener, got a ${update.kind} one`);
  return update;
}

describe("listenerResourceType", () => {
  it("is LDS: a SotW type named ListenerResource", () => {
    expect(listenerResourceType.typeUrl).toBe("type.googleapis.com/envoy.config.listener.v3.Listener");
    expect(listenerResourceType.typeName).toBe("ListenerResource");
    expect(listenerResourceType.allResourcesRequiredInSotW).toBe(true);
  });

  it("decodes an RDS listener into a frozen update with the raw message non-enumerable", () => {
    const result = decode(hcm({ commonHttpProtocolOptions: { maxStreamDuration: { seconds: 30n } } }));
    expect(result.ok && result.name).toBe("listener-a");
    const update = expectClient(result);
    expect(update).toEqual({
      kind: "client",
      name: "listener-a",
      route: { type: "rds", routeConfigName: "rc-1" },
      httpFilters: [
        {
          name: "router",
          isOptional: false,
          disabled: false,
          config: { type: "envoy.extensions.filters.http.router.v3.Router", kind: "bytes", value: new Uint8Array() },
        },
      ],
      maxStreamDurationMs: 30000,
    });
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.keys(update)).not.toContain("raw");
    expect(update.raw.name).toBe("listener-a");
  });

  describe("accepts each shape gRPC accepts", () => {
    it("rds with a self config source", () => {
      const update = expectClient(
        decode(
          hcm({
            routeSpecifier: {
              case: "rds",
              value: { configSource: { configSourceSpecifier: { case: "self", value: {} } }, routeConfigName: "x" },
            },
          }),
        ),
      );
      expect(update.route).toEqual({ type: "rds", routeConfigName: "x" });
    });

    it("an inline route_config, validated with the RDS rules", () => {
      const update = expectClient(
        decode(
          hcm({
            routeSpecifier: {
              case: "routeConfig",
              value: {
                name: "inline",
                virtualHosts: [
                  {
                    domains: ["*"],
                    routes: [
                      {
                        match: { pathSpecifier: { case: "prefix", value: "" } },
                        action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "c" } } },
                      },
                    ],
                  },
                ],
              },
            },
          }),
        ),
      );
      expect(update.route).toMatchObject({
        type: "inline",
        routeConfiguration: {
          virtualHosts: [{ domains: ["*"], routes: [{ action: { type: "cluster", cluster: "c" } }] }],
        },
      });
    });

    it("client filters before the router, and optional unsupported ones skipped (A39)", () => {
      const update = expectClient(
        decode(
          hcm({
            httpFilters: [
              { name: "fault", configType: { case: "typedConfig", value: opaque(FAULT) } },
              {
                name: "unknown",
                configType: { case: "typedConfig", value: opaque("type.googleapis.com/some.Filter") },
                isOptional: true,
              },
              { name: "rbac", configType: { case: "typedConfig", value: opaque(RBAC) }, isOptional: true },
              router,
            ],
          }),
        ),
      );
      expect(update.httpFilters.map((f) => [f.name, f.config.type])).toEqual([
        ["fault", "envoy.extensions.filters.http.fault.v3.HTTPFault"],
        ["router", "envoy.extensions.filters.http.router.v3.Router"],
      ]);
    });

    it("a filter disabled in the HttpConnectionManager, to be enabled per route", () => {
      const update = expectClient(
        decode(
          hcm({
            httpFilters: [
              { name: "fault", configType: { case: "typedConfig", value: opaque(FAULT) }, disabled: true },
              router,
            ],
          }),
        ),
      );
      expect(update.httpFilters.map((f) => [f.name, f.disabled])).toEqual([
        ["fault", true],
        ["router", false],
      ]);
    });

    it("a filter config's bytes are a copy: the update keeps nothing of the response it came in", () => {
      const any = anyPack(
        ListenerSchema,
        create(ListenerSchema, {
          name: "listener-a",
          apiListener: {
            apiListener: pack(HttpConnectionManagerSchema, hcm({ httpFilters: [fault(), router] })),
          },
        }),
      );
      const update = expectClient(listenerResourceType.decode(any, context));
      const config = update.httpFilters[0]!.config;
      expect(config).toEqual({
        type: "envoy.extensions.filters.http.fault.v3.HTTPFault",
        kind: "bytes",
        value: new Uint8Array([8, 1]),
      });
      expect(config.kind === "bytes" && config.value.buffer).not.toBe(any.value.buffer);
      expect(config.kind === "bytes" && config.value.buffer.byteLength).toBe(2);
    });

    it("the HttpConnectionManager given as a TypedStruct is refused like gRPC (it must be serialized)", () => {
      const result = decodeWith(listenerResourceType, ListenerSchema, {
        name: "l",
        apiListener: {
          apiListener: typedStruct(
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
            {},
          ),
        },
      });
      expectError(
        result,
        "api_listener.api_listener.value[xds.type.v3.TypedStruct].value[envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager]: could not parse HttpConnectionManager config",
        "l",
      );
    });
  });

  describe("rejects with gRPC's rules, naming the field", () => {
    const cases: [string, HcmInit, string][] = [
      [
        "neither rds nor route_config",
        hcm({ routeSpecifier: { case: undefined } }),
        `${HCM}: neither route_config nor rds fields are present`,
      ],
      [
        "rds without config_source",
        hcm({ routeSpecifier: { case: "rds", value: { routeConfigName: "x" } } }),
        `${HCM}.rds.config_source: field not present`,
      ],
      [
        "rds from an api_config_source",
        hcm({
          routeSpecifier: {
            case: "rds",
            value: { configSource: { configSourceSpecifier: { case: "apiConfigSource", value: {} } } },
          },
        }),
        `${HCM}.rds.config_source: ConfigSource does not specify ADS or SELF`,
      ],
      ["no http filters", hcm({ httpFilters: [] }), `${HCM}.http_filters: expected at least one HTTP filter`],
      [
        "a filter after the router, which is then not last",
        hcm({ httpFilters: [router, { name: "fault", configType: { case: "typedConfig", value: opaque(FAULT) } }] }),
        `${HCM}.http_filters: terminal filter for config type envoy.extensions.filters.http.router.v3.Router must be the last filter in the chain; ` +
          `${HCM}.http_filters: non-terminal filter for config type envoy.extensions.filters.http.fault.v3.HTTPFault is the last filter in the chain`,
      ],
      [
        "a disabled router",
        hcm({ httpFilters: [{ ...router, disabled: true }] }),
        `${HCM}.http_filters[0].disabled: the terminal filter cannot be disabled`,
      ],
      [
        "two routers",
        hcm({ httpFilters: [router, { ...router, name: "router-2" }] }),
        `${HCM}.http_filters: terminal filter for config type envoy.extensions.filters.http.router.v3.Router must be the last filter in the chain`,
      ],
      [
        "empty and duplicate filter names",
        hcm({ httpFilters: [{ ...router, name: "" }, router, router] }),
        `${HCM}.http_filters[0].name: empty filter name; ${HCM}.http_filters[2].name: duplicate HTTP filter name: router`,
      ],
      [
        "a filter without typed_config, an unsupported filter, and a server-only filter",
        hcm({
          httpFilters: [
            { name: "a" },
            { name: "b", configType: { case: "typedConfig", value: opaque("type.googleapis.com/some.Filter") } },
            { name: "c", configType: { case: "typedConfig", value: opaque(RBAC) } },
            { name: "d", configType: { case: "typedConfig", value: { typeUrl: "bad-url", value: new Uint8Array() } } },
            router,
          ],
        }),
        `${HCM}.http_filters[0].typed_config: field not present; ` +
          `${HCM}.http_filters[1].typed_config.value[some.Filter]: unsupported filter type; ` +
          `${HCM}.http_filters[2].typed_config.value[envoy.extensions.filters.http.rbac.v3.RBAC]: filter is not supported on clients; ` +
          `${HCM}.http_filters[3].typed_config.type_url: invalid value "bad-url"; ` +
          `${HCM}.http_filters[3].typed_config.value[bad-url]: unsupported filter type`,
      ],
      [
        "a router config that does not parse",
        hcm({
          httpFilters: [
            {
              name: "router",
              configType: {
                case: "typedConfig",
                value: {
                  typeUrl: "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
                  value: new Uint8Array([0x0a]),
                },
              },
            },
          ],
        }),
        `${HCM}.http_filters[0].typed_config.value[envoy.extensions.filters.http.router.v3.Router]: could not parse router filter config`,
      ],
      [
        "xff_num_trusted_hops and original_ip_detection_extensions (A41)",
        hcm({ xffNumTrustedHops: 1, originalIpDetectionExtensions: [{ name: "x" }] }),
        `${HCM}.xff_num_trusted_hops: must be zero; ${HCM}.original_ip_detection_extensions: must be empty`,
      ],
      [
        "a negative max_stream_duration",
        hcm({ commonHttpProtocolOptions: { maxStreamDuration: { seconds: -1n } } }),
        `${HCM}.common_http_protocol_options.max_stream_duration.seconds: value must be in the range [0, 315576000000]`,
      ],
      [
        "an invalid inline route_config",
        hcm({ routeSpecifier: { case: "routeConfig", value: { virtualHosts: [{ routes: [] }] } } }),
        `${HCM}.route_config.virtual_hosts[0].domains: must be non-empty`,
      ],
    ];
    it.each(cases)("%s", (_name, init, error) => {
      expectError(decode(init), error, "listener-a");
    });

    it("a Listener with neither address nor api_listener; one with an address is read as a server Listener", () => {
      expectError(
        decodeWith(listenerResourceType, ListenerSchema, { name: "l" }),
        "Listener has neither address nor ApiListener",
        "l",
      );
      expectError(
        decodeWith(listenerResourceType, ListenerSchema, {
          name: "s",
          address: { address: { case: "socketAddress", value: { address: "0.0.0.0" } } },
        }),
        "address.socket_address.port_value: field not present; default_filter_chain: must be set if filter_chains is unset",
        "s",
      );
    });

    it("an api_listener that is not an HttpConnectionManager, or that does not parse", () => {
      expectError(
        decodeWith(listenerResourceType, ListenerSchema, {
          name: "l",
          apiListener: { apiListener: pack(RouterSchema, {}) },
        }),
        "api_listener.api_listener.value[envoy.extensions.filters.http.router.v3.Router]: unsupported filter type",
      );
      expectError(
        decodeWith(listenerResourceType, ListenerSchema, { name: "l", apiListener: {} }),
        "api_listener.api_listener: field not present",
      );
      const garbled = {
        typeUrl:
          "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        value: new Uint8Array([0x1a, 0x09]),
      };
      expectError(
        decodeWith(listenerResourceType, ListenerSchema, { name: "l", apiListener: { apiListener: garbled } }),
        `${HCM}: could not parse HttpConnectionManager config`,
      );
    });

    it("bytes that do not parse, with no name", () => {
      const any = anyPack(ListenerSchema, create(ListenerSchema, {}));
      const result = listenerResourceType.decode({ ...any, value: new Uint8Array([0x0a, 0x10]) }, context);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.name).toBeUndefined();
      expect(!result.ok && result.error).toMatch(/^can't parse Listener resource: /);
    });
  });
});
