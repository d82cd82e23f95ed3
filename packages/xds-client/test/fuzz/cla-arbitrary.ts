// Arbitrary ClusterLoadAssignment messages, built field by field over the whole schema (every field the EDS fast
// path keeps, and the ones it only walks: metadata, health check config, pipes, named endpoints, policy knobs), with
// values chosen to reach both sides of every EDS validation rule.
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { AddressSchema, SocketAddress_Protocol } from "@xdskit/protos/envoy/config/core/v3/address_pb";
import type { MetadataSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type {
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_components_pb";
import type { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import type { FractionalPercent_DenominatorType } from "@xdskit/protos/envoy/type/v3/percent_pb";
import fc from "fast-check";

type Init<T> = Exclude<T, { $typeName: string }>;
export type ClaInit = Init<MessageInitShape<typeof ClusterLoadAssignmentSchema>>;

/** A string from a few short values (so that duplicates happen) or any text, including lone surrogates. */
function textArb(...common: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("", ...common) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 8 }) },
  );
}

const uint32Arb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(0x7fffffff, 0x80000000, 0xffffffff) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffffffff }) },
);

const int32Arb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: -0x80000000, max: 0x7fffffff }) },
);

const ipArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom("10.0.0.1", "10.0.0.2", "10.0.0.3", "::1", "2001:db8::1", "::ffff:10.0.0.1"),
  },
  { weight: 2, arbitrary: fc.ipV4() },
  { weight: 1, arbitrary: fc.ipV6() },
  { weight: 1, arbitrary: fc.constantFrom("1.2.3", "10.0.0.256", "host.example", "[::1]", "::g", "01.2.3.4", "") },
);

const jsonArb = fc.dictionary(
  textArb("k", "hash_key"),
  fc.jsonValue({ maxDepth: 2 }).filter((value) => !Object.is(value, -0)),
  { maxKeys: 2 },
) as fc.Arbitrary<JsonObject>;

const metadataArb: fc.Arbitrary<Init<MessageInitShape<typeof MetadataSchema>>> = fc.record(
  {
    filterMetadata: fc.dictionary(textArb("envoy.lb"), jsonArb, { maxKeys: 2 }),
    typedFilterMetadata: fc.dictionary(
      textArb("typed"),
      fc.record({ typeUrl: textArb("type.googleapis.com/x"), value: fc.uint8Array({ maxLength: 4 }) }),
      { maxKeys: 1 },
    ),
  },
  { requiredKeys: [] },
);

const addressArb: fc.Arbitrary<Init<MessageInitShape<typeof AddressSchema>>> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record(
        {
          // Enums are open: values outside the declared ones travel as numbers.
          protocol: fc.constantFrom(0, 1, 5) as fc.Arbitrary<SocketAddress_Protocol>,
          address: ipArb,
          portSpecifier: fc.oneof(
            { weight: 6, arbitrary: fc.record({ case: fc.constant("portValue" as const), value: uint32Arb }) },
            { weight: 1, arbitrary: fc.record({ case: fc.constant("namedPort" as const), value: textArb("http") }) },
            { weight: 1, arbitrary: fc.constant({ case: undefined }) },
          ),
          resolverName: textArb("custom"),
          ipv4Compat: fc.boolean(),
        },
        { requiredKeys: ["address", "portSpecifier"] },
      )
      .map((value) => ({ address: { case: "socketAddress" as const, value } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ path: textArb("/run/s"), mode: uint32Arb })
      .map((value) => ({ address: { case: "pipe" as const, value } })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ name: textArb("l"), endpointId: textArb("e") }).map(({ name, endpointId }) => ({
      address: {
        case: "envoyInternalAddress" as const,
        value: { addressNameSpecifier: { case: "serverListenerName" as const, value: name }, endpointId },
      },
    })),
  },
  { weight: 1, arbitrary: fc.constant({}) },
);

const endpointArb: fc.Arbitrary<Init<MessageInitShape<typeof EndpointSchema>>> = fc.record(
  {
    address: addressArb,
    healthCheckConfig: fc.record(
      { portValue: uint32Arb, hostname: textArb("hc"), address: addressArb, disableActiveHealthCheck: fc.boolean() },
      { requiredKeys: [] },
    ),
    hostname: textArb("a.example"),
    additionalAddresses: fc.array(fc.record({ address: addressArb }, { requiredKeys: [] }), { maxLength: 2 }),
  },
  { requiredKeys: ["address"] },
);

const lbEndpointArb: fc.Arbitrary<Init<MessageInitShape<typeof LbEndpointSchema>>> = fc.record(
  {
    hostIdentifier: fc.oneof(
      { weight: 8, arbitrary: fc.record({ case: fc.constant("endpoint" as const), value: endpointArb }) },
      { weight: 1, arbitrary: fc.record({ case: fc.constant("endpointName" as const), value: textArb("n") }) },
      { weight: 1, arbitrary: fc.constant({ case: undefined }) },
    ),
    healthStatus: int32Arb,
    metadata: metadataArb,
    loadBalancingWeight: uint32Arb,
  },
  { requiredKeys: ["hostIdentifier"] },
);

const localityArb: fc.Arbitrary<Init<MessageInitShape<typeof LocalityLbEndpointsSchema>>> = fc.record(
  {
    locality: fc.record({ region: textArb("r"), zone: textArb("z1", "z2"), subZone: textArb("s") }),
    metadata: metadataArb,
    lbEndpoints: fc.array(lbEndpointArb, { maxLength: 4 }),
    loadBalancingWeight: uint32Arb,
    priority: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 2 }) }, { weight: 1, arbitrary: uint32Arb }),
    proximity: uint32Arb,
  },
  { requiredKeys: ["lbEndpoints"] },
);

export const claArb: fc.Arbitrary<ClaInit> = fc.record(
  {
    clusterName: textArb("eds-a"),
    endpoints: fc.array(localityArb, { maxLength: 4 }),
    namedEndpoints: fc.dictionary(textArb("n"), endpointArb, { maxKeys: 1 }),
    policy: fc.record(
      {
        dropOverloads: fc.array(
          fc.record(
            {
              category: textArb("throttle"),
              dropPercentage: fc.record({
                numerator: uint32Arb,
                denominator: fc.constantFrom(0, 1, 2, 3, -1) as fc.Arbitrary<FractionalPercent_DenominatorType>,
              }),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
        overprovisioningFactor: uint32Arb,
        endpointStaleAfter: fc.record({
          seconds: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          nanos: int32Arb,
        }),
        weightedPriorityHealth: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ["endpoints"] },
);
