// Arbitrary messages of any type, built from its descriptor: every field may be set (scalars with edge values,
// enums known and unknown, nested messages to a bounded depth, lists, maps, oneofs, wrappers, Struct), and every
// `google.protobuf.Any` holds an arbitrary message of one of the types the decoders unpack (or bytes of no type),
// so the properties reach the payloads the resource types decode too. Encoded with protobuf-es.
import {
  create,
  type DescField,
  type DescMessage,
  type JsonValue,
  type MessageShape,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos/registry";
import fc from "fast-check";
import { TypedStructSchema } from "../../src/resources/typed-struct-schema.js";

/** Types an Any may hold: those the decoders unpack, and TypedStruct. */
const ANY_PAYLOADS: readonly DescMessage[] = [
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  "envoy.extensions.filters.http.router.v3.Router",
  "envoy.config.route.v3.FilterConfig",
  "envoy.extensions.clusters.aggregate.v3.ClusterConfig",
  "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
  "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash",
  "envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin",
  "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest",
  "envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst",
  "envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality",
  "envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin",
]
  .map((name) => xdsRegistry.getMessage(name))
  .filter((desc): desc is DescMessage => desc !== undefined)
  .concat(TypedStructSchema);

const WRAPPERS = new Set([
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
]);

const textArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("", "a", "b", "*", "/svc", "named_metrics.x", "xdstp://a/b/c") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
);

function scalarArb(type: ScalarType): fc.Arbitrary<unknown> {
  switch (type) {
    case ScalarType.STRING:
      return textArb;
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 4 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.DOUBLE:
      return fc.oneof(fc.constantFrom(0, -1, 0.5, 1e300), fc.double());
    case ScalarType.FLOAT:
      return fc.oneof(fc.constantFrom(0, -1, 0.5), fc.float());
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return fc.oneof(fc.bigInt({ min: -2n, max: 5n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.oneof(fc.bigInt({ min: 0n, max: 5n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constantFrom(100, 101, 0xffffffff));
    default:
      return fc.oneof(fc.integer({ min: -1, max: 5 }), fc.constantFrom(0x7fffffff, -0x80000000));
  }
}

const jsonArb = fc.jsonValue({ maxDepth: 2 }).filter((value) => !Object.is(value, -0)) as fc.Arbitrary<JsonValue>;
const jsonObjectArb = fc.dictionary(textArb, jsonArb, { maxKeys: 2 });

const cache = new Map<string, fc.Arbitrary<unknown>>();

/** An init object for a message of `desc`; `depth` counts down to 0, where no message field is set. */
function initArb(desc: DescMessage, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const key = `${desc.typeName}@${depth}`;
  const cached = cache.get(key);
  if (cached) return cached as fc.Arbitrary<Record<string, unknown>>;
  // Children are built one level shallower, so building ends at depth 0 even for recursive types.
  const built = buildInit(desc, depth);
  cache.set(key, built);
  return built;
}

function optional(arb: fc.Arbitrary<unknown>, absentWeight: number): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
}

/** One value of `field` (a list item, a map value, a oneof member, a singular value). */
function valueArb(field: DescField, depth: number, unboxed: boolean): fc.Arbitrary<unknown> | undefined {
  const message = field.message;
  if (message === undefined) {
    if (field.enum !== undefined) return fc.constantFrom(...field.enum.values.map((v) => v.number), 77);
    return scalarArb(field.scalar ?? ScalarType.INT32);
  }
  if (message.typeName === "google.protobuf.Struct") return jsonObjectArb;
  if (message.typeName === "google.protobuf.Value") return jsonArb;
  if (message.typeName === "google.protobuf.ListValue") return fc.array(jsonArb, { maxLength: 2 });
  if (unboxed && WRAPPERS.has(message.typeName)) return scalarArb(message.fields[0]!.scalar!);
  if (depth <= 0) return undefined;
  if (message.typeName === "google.protobuf.Any") return anyArb(depth - 1);
  return initArb(message, depth - 1);
}

/** An Any holding an arbitrary payload (its type URL sometimes malformed), or bytes of no known type. */
function anyArb(depth: number): fc.Arbitrary<unknown> {
  const payloads = ANY_PAYLOADS.map((desc) =>
    fc
      .record({
        prefix: fc.constantFrom("type.googleapis.com/", "type.googleapis.com/", "", "x/"),
        init: depth > 0 ? initArb(desc, depth - 1) : fc.constant({}),
      })
      .map(({ prefix, init }) => ({
        typeUrl: `${prefix}${desc.typeName}`,
        value: toBinary(desc, create(desc, init)),
      })),
  );
  return fc.oneof(...payloads, fc.record({ typeUrl: textArb, value: fc.uint8Array({ maxLength: 6 }) }));
}

function buildInit(desc: DescMessage, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  const absent = 2 + 4 - Math.min(depth, 4);
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      const cases = member.fields.flatMap((field) => {
        const value = valueArb(field, depth, false);
        return value === undefined ? [] : [value.map((v) => ({ case: field.localName, value: v }))];
      });
      if (cases.length > 0) parts[member.localName] = optional(fc.oneof(...cases), absent);
      continue;
    }
    const field = member;
    let arb: fc.Arbitrary<unknown> | undefined;
    if (field.fieldKind === "list") {
      const item = valueArb(field, depth, false);
      if (item !== undefined) arb = fc.array(item, { minLength: 1, maxLength: 2 });
    } else if (field.fieldKind === "map") {
      const value = valueArb(field, depth, false);
      const keyArb = field.mapKey === ScalarType.STRING ? textArb : scalarArb(field.mapKey).map(String);
      if (value !== undefined) {
        arb = fc.array(fc.tuple(keyArb, value), { minLength: 1, maxLength: 2 }).map((entries) => {
          const map: Record<string, unknown> = {};
          for (const [k, v] of entries) map[k as string] = v;
          return map;
        });
      }
    } else {
      arb = valueArb(field, depth, true);
    }
    if (arb !== undefined) parts[field.localName] = optional(arb, field.message === undefined ? 1 : absent);
  }
  return fc.record(parts).map((init) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(init)) if (v !== undefined) out[k] = v;
    return out;
  });
}

/** Encoded arbitrary messages of `desc`, nested at most `depth` messages deep. */
export function encodedMessageArb(desc: DescMessage, depth = 8): fc.Arbitrary<Uint8Array> {
  return initArb(desc, depth).map((init) => toBinary(desc, create(desc, init as never) as MessageShape<DescMessage>));
}
