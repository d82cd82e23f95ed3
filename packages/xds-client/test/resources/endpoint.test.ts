import { create, type DescField, type DescMessage, fromBinary, ScalarType, toBinary } from "@bufbuild/protobuf";
import { UInt32ValueSchema } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema } from "@xdskit/protos/envoy/config/core/v3/address_pb";
import { LocalitySchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import {
  Endpoint_AdditionalAddressSchema,
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_components_pb";
import {
  ClusterLoadAssignment_Policy_DropOverloadSchema,
  ClusterLoadAssignment_PolicySchema,
  ClusterLoadAssignmentSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { FractionalPercent_DenominatorType, FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import { describe, expect, it } from "vitest";
import type { ClusterLoadAssignmentView } from "../../src/gen/envoy/config/endpoint/v3/endpoint_view.js";
import { validateClusterLoadAssignment } from "../../src/resources/endpoint.js";
import { type EndpointUpdate, endpointResourceType } from "../../src/resources/index.js";
import { ValidationErrors } from "../../src/resources/validation.js";
import { context, decodeWith, expectError, expectOk, type Init, isDeeplyFrozen } from "./context.js";

type ClaInit = Init<typeof ClusterLoadAssignmentSchema>;
type LbEndpointInit = Init<typeof LbEndpointSchema>;

function socket(address: string, port: number) {
  return {
    address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } },
  } as const;
}

function endpoint(address: string, port: number, extra: LbEndpointInit = {}): LbEndpointInit {
  return { hostIdentifier: { case: "endpoint", value: { address: socket(address, port) } }, ...extra };
}

/** `weight` null leaves load_balancing_weight unset. */
function locality(zone: string, lbEndpoints: LbEndpointInit[], weight: number | null = 1, priority = 0) {
  return {
    locality: { region: "r", zone, subZone: "" },
    lbEndpoints,
    ...(weight === null ? {} : { loadBalancingWeight: weight }),
    priority,
  };
}

function decode(init: ClaInit) {
  return decodeWith(endpointResourceType, ClusterLoadAssignmentSchema, { clusterName: "eds-a", ...init });
}

describe("endpointResourceType", () => {
  it("is EDS: not required in SotW, named EndpointResource", () => {
    expect(endpointResourceType.typeUrl).toBe("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment");
    expect(endpointResourceType.typeName).toBe("EndpointResource");
    expect(endpointResourceType.allResourcesRequiredInSotW).toBe(false);
  });

  it("groups localities by priority with endpoints, weights, health, hostnames and hash keys", () => {
    const update = expectOk(
      decode({
        endpoints: [
          locality(
            "z1",
            [
              endpoint("10.0.0.1", 80, { healthStatus: HealthStatus.HEALTHY, loadBalancingWeight: 3 }),
              {
                hostIdentifier: {
                  case: "endpoint",
                  value: {
                    address: socket("10.0.0.2", 80),
                    hostname: "b.example",
                    additionalAddresses: [{ address: socket("2001:db8::2", 80) }],
                  },
                },
                healthStatus: HealthStatus.DRAINING,
                metadata: {
                  filterMetadata: { "envoy.lb": { hash_key: "b-key", other: 1 }, istio: { hash_key: "no" } },
                },
              },
            ],
            5,
            1,
          ),
          locality("z2", [endpoint("10.0.0.3", 81, { healthStatus: HealthStatus.UNHEALTHY })], 2, 0),
          locality("z3", [endpoint("10.0.0.4", 81)], 7, 1),
        ],
      }),
    );
    expect(update).toEqual({
      clusterName: "eds-a",
      priorities: [
        {
          localities: [
            {
              locality: { region: "r", zone: "z2", subZone: "" },
              weight: 2,
              endpoints: [
                {
                  addresses: [{ address: "10.0.0.3", port: 81 }],
                  healthStatus: "UNHEALTHY",
                  weight: 1,
                  hostname: "",
                  hashKey: "",
                },
              ],
            },
          ],
        },
        {
          localities: [
            {
              locality: { region: "r", zone: "z1", subZone: "" },
              weight: 5,
              endpoints: [
                {
                  addresses: [{ address: "10.0.0.1", port: 80 }],
                  healthStatus: "HEALTHY",
                  weight: 3,
                  hostname: "",
                  hashKey: "",
                },
                {
                  addresses: [
                    { address: "10.0.0.2", port: 80 },
                    { address: "2001:db8::2", port: 80 },
                  ],
                  healthStatus: "DRAINING",
                  weight: 1,
                  hostname: "b.example",
                  hashKey: "b-key",
                },
              ],
            },
            {
              locality: { region: "r", zone: "z3", subZone: "" },
              weight: 7,
              endpoints: [
                {
                  addresses: [{ address: "10.0.0.4", port: 81 }],
                  healthStatus: "UNKNOWN",
                  weight: 1,
                  hostname: "",
                  hashKey: "",
                },
              ],
            },
          ],
        },
      ],
      dropOverloads: [],
    });
    expect(isDeeplyFrozen(update)).toBe(true);
    expect(Object.keys(update)).not.toContain("raw");
    expect(update.raw.clusterName).toBe("eds-a");
  });

  describe("accepts what gRPC accepts", () => {
    const cases: [string, ClaInit, (update: EndpointUpdate) => void][] = [
      ["no endpoints at all", {}, (u) => expect(u).toMatchObject({ priorities: [], dropOverloads: [] })],
      [
        "a hash_key that is not a string, or empty, places the endpoint by its address (A76)",
        {
          endpoints: [
            locality("z1", [
              endpoint("10.0.0.1", 1, { metadata: { filterMetadata: { "envoy.lb": { hash_key: 7 } } } }),
              endpoint("10.0.0.2", 1, { metadata: { filterMetadata: { "envoy.lb": { hash_key: "" } } } }),
              endpoint("10.0.0.3", 1, { metadata: { filterMetadata: { "envoy.lb": { hash_key: ["k"] } } } }),
            ]),
          ],
        },
        (u) => expect(u.priorities[0]?.localities[0]?.endpoints.map((e) => e.hashKey)).toEqual(["", "", ""]),
      ],
      [
        "a locality without weight is skipped, even when invalid",
        { endpoints: [locality("z1", [endpoint("not-an-ip", 1)], null), locality("z2", [endpoint("10.0.0.1", 1)], 0)] },
        (u) => expect(u).toMatchObject({ priorities: [] }),
      ],
      [
        "the same locality in two priorities",
        {
          endpoints: [locality("z1", [endpoint("10.0.0.1", 1)], 1, 0), locality("z1", [endpoint("10.0.0.2", 1)], 1, 1)],
        },
        (u) =>
          expect(u).toMatchObject({ priorities: [{ localities: [{ weight: 1 }] }, { localities: [{ weight: 1 }] }] }),
      ],
      [
        "an endpoint with an unknown health status enum value is dropped",
        {
          endpoints: [
            locality("z1", [endpoint("10.0.0.1", 1, { healthStatus: 42 as HealthStatus }), endpoint("10.0.0.2", 1)]),
          ],
        },
        (u) =>
          expect(u).toMatchObject({
            priorities: [{ localities: [{ endpoints: [{ addresses: [{ address: "10.0.0.2" }] }] }] }],
          }),
      ],
      [
        "the same IP on different ports, and IPv6 with a zone",
        {
          endpoints: [locality("z1", [endpoint("10.0.0.1", 1), endpoint("10.0.0.1", 2), endpoint("fe80::1%eth0", 2)])],
        },
        (u) => expect(u).toMatchObject({ priorities: [{ localities: [{ endpoints: [{}, {}, {}] }] }] }),
      ],
      [
        "drop overloads normalised to per million and capped",
        {
          policy: {
            dropOverloads: [
              {
                category: "lb",
                dropPercentage: { numerator: 5, denominator: FractionalPercent_DenominatorType.HUNDRED },
              },
              {
                category: "throttle",
                dropPercentage: { numerator: 7, denominator: FractionalPercent_DenominatorType.TEN_THOUSAND },
              },
              {
                category: "m",
                dropPercentage: { numerator: 9, denominator: FractionalPercent_DenominatorType.MILLION },
              },
              {
                category: "all",
                dropPercentage: { numerator: 200, denominator: FractionalPercent_DenominatorType.HUNDRED },
              },
            ],
          },
        },
        (u) =>
          expect(u.dropOverloads).toEqual([
            { category: "lb", dropsPerMillion: 50000 },
            { category: "throttle", dropsPerMillion: 700 },
            { category: "m", dropsPerMillion: 9 },
            { category: "all", dropsPerMillion: 1000000 },
          ]),
      ],
    ];
    it.each(cases)("%s", (_name, init, check) => {
      check(expectOk(decode(init)));
    });
  });

  describe("rejects with gRPC's rules, naming the field", () => {
    const cases: [string, ClaInit, string][] = [
      [
        "a locality without its locality name",
        { endpoints: [{ loadBalancingWeight: 1, lbEndpoints: [endpoint("10.0.0.1", 1)] }] },
        "endpoints[0].locality: field not present",
      ],
      [
        "an endpoint weight of zero",
        { endpoints: [locality("z", [endpoint("10.0.0.1", 1, { loadBalancingWeight: 0 })])] },
        "endpoints[0].lb_endpoints[0].load_balancing_weight: must be greater than 0",
      ],
      [
        "an lb endpoint without endpoint",
        { endpoints: [locality("z", [{ hostIdentifier: { case: "endpointName", value: "named" } }])] },
        "endpoints[0].lb_endpoints[0].endpoint: field not present",
      ],
      [
        "an endpoint without address, then without socket_address",
        {
          endpoints: [
            locality("z", [
              { hostIdentifier: { case: "endpoint", value: {} } },
              {
                hostIdentifier: {
                  case: "endpoint",
                  value: { address: { address: { case: "pipe", value: { path: "/p" } } } },
                },
              },
            ]),
          ],
        },
        "endpoints[0].lb_endpoints[0].endpoint.address: field not present; endpoints[0].lb_endpoints[1].endpoint.address.socket_address: field not present",
      ],
      [
        "a port above 65535",
        { endpoints: [locality("z", [endpoint("10.0.0.1", 65536)])] },
        "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: invalid port",
      ],
      [
        "host names and malformed IP literals",
        {
          endpoints: [
            locality("z", [
              endpoint("backend.example.com", 80),
              endpoint("10.0.0.256", 80),
              endpoint("010.0.0.1", 80),
              endpoint("1:2:3:4:5:6:7:8:9", 80),
              endpoint("1::2::3", 80),
            ]),
          ],
        },
        [
          'endpoints[0].lb_endpoints[0].endpoint.address.socket_address: address "backend.example.com" is not a valid IPv4 or IPv6 address',
          'endpoints[0].lb_endpoints[1].endpoint.address.socket_address: address "10.0.0.256" is not a valid IPv4 or IPv6 address',
          'endpoints[0].lb_endpoints[2].endpoint.address.socket_address: address "010.0.0.1" is not a valid IPv4 or IPv6 address',
          'endpoints[0].lb_endpoints[3].endpoint.address.socket_address: address "1:2:3:4:5:6:7:8:9" is not a valid IPv4 or IPv6 address',
          'endpoints[0].lb_endpoints[4].endpoint.address.socket_address: address "1::2::3" is not a valid IPv4 or IPv6 address',
        ].join("; "),
      ],
      [
        "an invalid additional address",
        {
          endpoints: [
            locality("z", [
              {
                hostIdentifier: {
                  case: "endpoint",
                  value: { address: socket("10.0.0.1", 1), additionalAddresses: [{}] },
                },
              },
            ]),
          ],
        },
        "endpoints[0].lb_endpoints[0].endpoint.additional_addresses[0].address: field not present",
      ],
      [
        "duplicate addresses across localities and in additional addresses, IPv6 spelled differently",
        {
          endpoints: [
            locality("z1", [endpoint("10.0.0.1", 80), endpoint("2001:db8::1", 80)]),
            locality("z2", [
              endpoint("10.0.0.1", 80),
              {
                hostIdentifier: {
                  case: "endpoint",
                  value: {
                    address: socket("10.0.0.9", 80),
                    additionalAddresses: [{ address: socket("2001:DB8:0:0::1", 80) }],
                  },
                },
              },
            ]),
          ],
        },
        'endpoints[1].lb_endpoints[0]: duplicate endpoint address "10.0.0.1:80"; endpoints[1].lb_endpoints[1]: duplicate endpoint address "[2001:db8::1]:80"',
      ],
      [
        "the same locality twice in one priority",
        { endpoints: [locality("z1", [endpoint("10.0.0.1", 1)]), locality("z1", [endpoint("10.0.0.2", 1)])] },
        'endpoints[1]: duplicate locality {region="r", zone="z1", sub_zone=""} found in priority 0',
      ],
      [
        "a gap in priorities",
        {
          endpoints: [locality("z1", [endpoint("10.0.0.1", 1)], 1, 0), locality("z2", [endpoint("10.0.0.2", 1)], 1, 3)],
        },
        "endpoints: priority 1 empty; endpoints: priority 2 empty",
      ],
      [
        "no priority 0",
        { endpoints: [locality("z1", [endpoint("10.0.0.1", 1)], 1, 1)] },
        "endpoints: priority 0 empty",
      ],
      [
        "a huge priority gap is reported briefly",
        { endpoints: [locality("z1", [endpoint("10.0.0.1", 1)], 1, 4000000000)] },
        [
          ...Array.from({ length: 10 }, (_, i) => `endpoints: priority ${i} empty`),
          "endpoints: 3999999990 more empty priorities",
        ].join("; "),
      ],
      [
        "locality weights of one priority above uint32",
        {
          endpoints: [
            locality("z1", [endpoint("10.0.0.1", 1)], 4000000000),
            locality("z2", [endpoint("10.0.0.2", 1)], 400000000),
          ],
        },
        "endpoints: sum of locality weights for priority 0 exceeds uint32 max",
      ],
      [
        "drop overloads without category, percentage, or with an unknown denominator",
        {
          policy: {
            dropOverloads: [
              { dropPercentage: { numerator: 1 } },
              { category: "c" },
              { category: "d", dropPercentage: { numerator: 1, denominator: 7 as FractionalPercent_DenominatorType } },
            ],
          },
        },
        "policy.drop_overloads[0].category: empty drop category name; policy.drop_overloads[1].drop_percentage: field not present; policy.drop_overloads[2].drop_percentage.denominator: unknown denominator type",
      ],
    ];
    it.each(cases)("%s", (_name, init, error) => {
      expectError(decode(init), error, "eds-a");
    });
  });

  it("gives resources naming the same recent locality one shared name object; names stay equal by value", () => {
    const nameOf = (zone: string, subZone = "") => {
      const update = expectOk(
        decode({
          endpoints: [{ ...locality(zone, [endpoint("10.0.0.1", 80)]), locality: { region: "r", zone, subZone } }],
        }),
      );
      return update.priorities[0]!.localities[0]!.locality;
    };
    const first = nameOf("shared-a");
    expect(nameOf("shared-a")).toBe(first);
    expect(nameOf("shared-a", "s")).not.toBe(first);
    expect(nameOf("shared-a", "s")).toEqual({ region: "r", zone: "shared-a", subZone: "s" });
    expect(Object.isFrozen(first)).toBe(true);
    // Only a few recent names are remembered: after many others, the same name is a new (equal) object.
    for (let i = 0; i < 20; i++) nameOf(`other-${i}`);
    const again = nameOf("shared-a");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("keeps each list in a frozen array of its own length, and every empty list as one shared empty array", () => {
    const update = expectOk(
      decode({ endpoints: [locality("z1", [endpoint("10.0.0.1", 80), endpoint("10.0.0.2", 80)])] }),
    );
    const other = expectOk(decode({ endpoints: [locality("z2", [endpoint("10.0.0.3", 80)])] }));
    expect(update.priorities[0]!.localities[0]!.endpoints).toHaveLength(2);
    expect(Object.isFrozen(update.priorities[0]!.localities[0]!.endpoints)).toBe(true);
    expect(update.dropOverloads).toHaveLength(0);
    expect(update.dropOverloads).toBe(other.dropOverloads);
  });

  // Sized to what it proves (a duplicate found at the end of a long list); decoding 100,000 endpoints is measured in
  // tools/bench (eds-100k-endpoints).
  it("detects a duplicate among 10,000 endpoints", () => {
    const lbEndpoints: LbEndpointInit[] = [];
    for (let i = 0; i < 10_000; i++) lbEndpoints.push(endpoint(`10.0.${(i >> 8) & 255}.${i & 255}`, 8080));
    lbEndpoints.push(endpoint("10.0.39.15", 8080));
    expectError(
      decode({ endpoints: [locality("z", lbEndpoints)] }),
      'endpoints[0].lb_endpoints[10000]: duplicate endpoint address "10.0.39.15:8080"',
      "eds-a",
    );
  });

  describe("the wire decoder reads what the full schema reads", () => {
    /** Validation of the fully decoded message (protobuf-es), as the reference. */
    function reference(bytes: Uint8Array) {
      const errors = new ValidationErrors();
      const update = validateClusterLoadAssignment(
        // The slow path's message, as readView gives it with the reference decoding on.
        fromBinary(ClusterLoadAssignmentSchema, bytes) as unknown as ClusterLoadAssignmentView,
        errors,
      );
      return errors.ok ? { ok: true, update } : { ok: false, error: errors.toString() };
    }
    function fast(bytes: Uint8Array) {
      const result = endpointResourceType.decode(
        { $typeName: "google.protobuf.Any", typeUrl: endpointResourceType.typeUrl, value: bytes },
        context,
      );
      return result.ok ? { ok: true, update: { ...result.value } } : { ok: false, error: result.error };
    }
    const bytesOf = (init: ClaInit) => toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, init));
    const inputs: ClaInit[] = [
      {
        clusterName: "a",
        endpoints: [
          locality(
            "z1",
            [endpoint("10.0.0.1", 80, { healthStatus: HealthStatus.DRAINING, loadBalancingWeight: 4 })],
            3,
            0,
          ),
        ],
      },
      { clusterName: "b", endpoints: [locality("z1", [endpoint("10.0.0.1", 80)], 3, 1)] },
      {
        clusterName: "c",
        endpoints: [
          {
            locality: { region: "r", zone: "z", subZone: "s" },
            loadBalancingWeight: 2,
            proximity: 9,
            metadata: { filterMetadata: { "envoy.lb": { hash_key: "k" } } },
            lbEndpoints: [
              {
                hostIdentifier: {
                  case: "endpoint",
                  value: {
                    address: {
                      address: {
                        case: "socketAddress",
                        value: {
                          address: "::1",
                          portSpecifier: { case: "namedPort", value: "http" },
                          resolverName: "x",
                        },
                      },
                    },
                    healthCheckConfig: { portValue: 9, hostname: "hc" },
                    hostname: "h",
                    additionalAddresses: [{ address: socket("10.0.0.7", 1) }, {}],
                  },
                },
                metadata: { filterMetadata: { m: { a: 1 } } },
              },
              { hostIdentifier: { case: "endpointName", value: "n" } },
            ],
          },
        ],
        policy: {
          overprovisioningFactor: 140,
          dropOverloads: [
            {
              category: "x",
              dropPercentage: { numerator: 3, denominator: FractionalPercent_DenominatorType.TEN_THOUSAND },
            },
          ],
        },
      },
      {
        clusterName: "d",
        endpoints: [locality("z1", [endpoint("10.0.0.1", 80), endpoint("10.0.0.1", 80, { loadBalancingWeight: 0 })])],
      },
      { clusterName: "e", endpoints: [{ loadBalancingWeight: 1 }, locality("z2", [endpoint("1.2.3", 1)], 1, 2)] },
    ];
    it.each(inputs.map((init) => [init.clusterName, init] as const))("input %s", (_name, init) => {
      const bytes = bytesOf(init);
      expect(fast(bytes)).toEqual(reference(bytes));
    });
    it("concatenated messages (proto merge: repeated fields append, singular ones merge)", () => {
      for (const first of inputs) {
        for (const second of inputs) {
          const bytes = new Uint8Array([...bytesOf(first), ...bytesOf(second)]);
          expect(fast(bytes)).toEqual(reference(bytes));
        }
      }
    });
    it("raw is decoded on first access and kept", () => {
      const update = expectOk(decode({ endpoints: [locality("z1", [endpoint("10.0.0.1", 80)])] }));
      const raw = update.raw;
      expect(raw.endpoints[0]?.lbEndpoints).toHaveLength(1);
      expect(update.raw).toBe(raw);
    });
    it("malformed bytes fail to parse, without a name, as they fail in protobuf-es", () => {
      const malformed = [
        "1205 01", // a length past the end
        "1001", // endpoints sent as a varint: read as a length of 1, past the end
        // An lb_endpoints length of 0x13 instead of 0x12: the locality's weight runs into the endpoint's metadata.
        "0a06676f6f642d65121d0a0312016112130a100a0e0a0c120831302e302e302e3118501a020805",
        "0a05667a2d65ff", // a cluster name that is not UTF-8
        "12060a040a02ff61", // a locality region that is not UTF-8
        "120b 1209 0a07 0a05 1203 0a01ff", // a pipe address (not kept by EDS) whose path is not UTF-8
        "1204 4a02 0a05", // locality metadata (not kept): a filter_metadata entry whose length runs past the end
      ];
      for (const hex of malformed) {
        const value = new Uint8Array(Buffer.from(hex.replaceAll(" ", ""), "hex"));
        expect(() => fromBinary(ClusterLoadAssignmentSchema, value), hex).toThrow();
        const result = endpointResourceType.decode(
          { $typeName: "google.protobuf.Any", typeUrl: endpointResourceType.typeUrl, value },
          context,
        );
        expect(result.ok, hex).toBe(false);
        expect(!result.ok && result.name).toBeUndefined();
        expect(!result.ok && result.error).toMatch(/^can't parse ClusterLoadAssignment resource: /);
      }
    });

    it("the fields the wire decoder keeps have the kinds it reads them as", () => {
      // The decoder reads these fields by number without consulting the schema; the rest go through the schema.
      const kept: [DescMessage, number, string][] = [
        [ClusterLoadAssignmentSchema, 1, "scalar string"],
        [ClusterLoadAssignmentSchema, 2, "list envoy.config.endpoint.v3.LocalityLbEndpoints"],
        [ClusterLoadAssignmentSchema, 4, "message envoy.config.endpoint.v3.ClusterLoadAssignment.Policy"],
        [
          ClusterLoadAssignment_PolicySchema,
          2,
          "list envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.DropOverload",
        ],
        [ClusterLoadAssignment_Policy_DropOverloadSchema, 1, "scalar string"],
        [ClusterLoadAssignment_Policy_DropOverloadSchema, 2, "message envoy.type.v3.FractionalPercent"],
        [FractionalPercentSchema, 1, "scalar uint32"],
        [FractionalPercentSchema, 2, "enum"],
        [LocalityLbEndpointsSchema, 1, "message envoy.config.core.v3.Locality"],
        [LocalityLbEndpointsSchema, 2, "list envoy.config.endpoint.v3.LbEndpoint"],
        [LocalityLbEndpointsSchema, 3, "message google.protobuf.UInt32Value"],
        [LocalityLbEndpointsSchema, 5, "scalar uint32"],
        [LocalitySchema, 1, "scalar string"],
        [LocalitySchema, 2, "scalar string"],
        [LocalitySchema, 3, "scalar string"],
        [LbEndpointSchema, 1, "message envoy.config.endpoint.v3.Endpoint"],
        [LbEndpointSchema, 2, "enum"],
        [LbEndpointSchema, 4, "message google.protobuf.UInt32Value"],
        [LbEndpointSchema, 5, "scalar string"],
        [EndpointSchema, 1, "message envoy.config.core.v3.Address"],
        [EndpointSchema, 3, "scalar string"],
        [EndpointSchema, 4, "list envoy.config.endpoint.v3.Endpoint.AdditionalAddress"],
        [Endpoint_AdditionalAddressSchema, 1, "message envoy.config.core.v3.Address"],
        [AddressSchema, 1, "message envoy.config.core.v3.SocketAddress"],
        [SocketAddressSchema, 2, "scalar string"],
        [SocketAddressSchema, 3, "scalar uint32"],
        [SocketAddressSchema, 4, "scalar string"],
        [UInt32ValueSchema, 1, "scalar uint32"],
      ];
      const describe = (field: DescField): string => {
        switch (field.fieldKind) {
          case "scalar":
            return `scalar ${ScalarType[field.scalar].toLowerCase()}`;
          case "enum":
            return "enum";
          case "message":
            return `message ${field.message.typeName}`;
          case "list":
            return `list ${field.message?.typeName}`;
          case "map":
            return "map";
        }
      };
      for (const [schema, number, kind] of kept) {
        const field = schema.fields.find((f) => f.number === number);
        expect(field && describe(field), `${schema.typeName} field ${number}`).toBe(kind);
        // Proto3: strings are UTF-8 checked, messages are length-delimited.
        if (field?.fieldKind === "scalar" && field.scalar === ScalarType.STRING)
          expect(field.utf8Validation).toBe(true);
        if (field?.message !== undefined) expect(field.fieldKind !== "map" && field.delimitedEncoding).toBe(false);
      }
    });
  });
});
