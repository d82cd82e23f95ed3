// A SotW request lists every subscribed name of its type, and a client with 10,000 subscriptions sends that list with
// every ACK: encoding 10,000 strings each time was a third of a re-push's cost. The client reuses one frozen name list
// while its subscriptions stay the same (sotw-call.ts), so the default transport encodes each such list once and
// writes the bytes as they are: the request goes out with the names as one pre-encoded run of field 3 (the
// `resource_names` entries, through protobuf-es's unknown fields, which it writes byte for byte after the known
// ones). The server reads the same request: a repeated field may come anywhere in a message.
import { create, toBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { type DiscoveryRequest, DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

/** Lists shorter than this are encoded with the request, as before. */
const MIN_NAMES = 16;

/** Each reused name list, encoded as field-3 entries without the first entry's tag (protobuf-es writes that one). */
const encoded = new WeakMap<readonly string[], Uint8Array>();

/** `request` for the wire, its names (a reused, frozen list) encoded once for all the requests that list them. */
export function withEncodedNames(request: DiscoveryRequest): DiscoveryRequest {
  const names = request.resourceNames;
  if (names.length < MIN_NAMES || !Object.isFrozen(names)) return request;
  let data = encoded.get(names);
  if (data === undefined) {
    // Every entry is tag 0x1a (field 3, length-delimited), then the name's length and bytes.
    data = toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { resourceNames: names })).subarray(1);
    encoded.set(names, data);
  }
  const names3 = { no: 3, wireType: WireType.LengthDelimited, data };
  return { ...request, resourceNames: [], $unknown: [...(request.$unknown ?? []), names3] };
}
