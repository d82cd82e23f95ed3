import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

/**
 * The fields of `envoy.config.endpoint.v3.ClusterLoadAssignment` that EDS validation reads, shaped like the
 * protobuf-es message so that one validator serves both this view and a fully decoded message.
 */
export interface SocketAddressView {
  address: string;
  portSpecifier: { case: "portValue"; value: number } | { case: "namedPort"; value: string } | { case: undefined };
}

export interface AddressView {
  address:
    | { case: "socketAddress"; value: SocketAddressView }
    | { case: "pipe" | "envoyInternalAddress"; value: object }
    | {
        case: undefined;
      };
}

export interface EndpointView {
  address?: AddressView | undefined;
  hostname: string;
  additionalAddresses: { address?: AddressView | undefined }[];
}

export interface LbEndpointView {
  hostIdentifier:
    | { case: "endpoint"; value: EndpointView }
    | { case: "endpointName"; value: string }
    | { case: undefined };
  healthStatus: number;
  loadBalancingWeight?: number | undefined;
}

export interface LocalityLbEndpointsView {
  locality?: { region: string; zone: string; subZone: string } | undefined;
  lbEndpoints: LbEndpointView[];
  loadBalancingWeight?: number | undefined;
  priority: number;
}

export interface DropOverloadView {
  category: string;
  dropPercentage?: { numerator: number; denominator: number } | undefined;
}

export interface ClusterLoadAssignmentView {
  clusterName: string;
  endpoints: LocalityLbEndpointsView[];
  policy?: { dropOverloads: DropOverloadView[] } | undefined;
}

/*
 * A decoder for exactly those fields, straight from the wire: protobuf-es's reflective decoding builds every field
 * of every message, which dominates EDS cost at 100,000 endpoints. Proto3 semantics are kept: unknown fields are
 * skipped, the last scalar wins, a repeated singular message field is merged into the earlier one, and a oneof takes
 * its last member. A wire type that does not match the field throws, as malformed input.
 */

function expect(reader: BinaryReader, wireType: WireType, expected: WireType): void {
  if (wireType !== expected) throw new Error(`invalid wire type ${wireType} at offset ${reader.pos}`);
}

/** The end offset of the length-delimited field whose tag was just read. */
function messageEnd(reader: BinaryReader, wireType: WireType): number {
  expect(reader, wireType, WireType.LengthDelimited);
  const length = reader.uint32();
  const end = reader.pos + length;
  if (end > reader.len) throw new Error("premature EOF");
  return end;
}

/** google.protobuf.UInt32Value merged over `previous`: its `value`, or `previous` (0 when unset) when absent. */
function readUInt32Value(reader: BinaryReader, end: number, previous: number | undefined): number {
  let value = previous ?? 0;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      expect(reader, wireType, WireType.Varint);
      value = reader.uint32();
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
  return value;
}

function readSocketAddress(reader: BinaryReader, end: number, target: SocketAddressView): void {
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.address = reader.string();
    } else if (fieldNo === 3) {
      expect(reader, wireType, WireType.Varint);
      target.portSpecifier = { case: "portValue", value: reader.uint32() };
    } else if (fieldNo === 4) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.portSpecifier = { case: "namedPort", value: reader.string() };
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
}

function readAddress(reader: BinaryReader, end: number, target: AddressView): void {
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      const fieldEnd = messageEnd(reader, wireType);
      let socket: SocketAddressView;
      if (target.address.case === "socketAddress") {
        socket = target.address.value;
      } else {
        socket = { address: "", portSpecifier: { case: undefined } };
        target.address = { case: "socketAddress", value: socket };
      }
      readSocketAddress(reader, fieldEnd, socket);
    } else if (fieldNo === 2 || fieldNo === 3) {
      const fieldEnd = messageEnd(reader, wireType);
      reader.pos = fieldEnd;
      target.address = { case: fieldNo === 2 ? "pipe" : "envoyInternalAddress", value: {} };
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
}

function newAddress(): AddressView {
  return { address: { case: undefined } };
}

function readEndpoint(reader: BinaryReader, end: number, target: EndpointView): void {
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      const fieldEnd = messageEnd(reader, wireType);
      target.address ??= newAddress();
      readAddress(reader, fieldEnd, target.address);
    } else if (fieldNo === 3) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.hostname = reader.string();
    } else if (fieldNo === 4) {
      const fieldEnd = messageEnd(reader, wireType);
      const additional: { address?: AddressView } = {};
      while (reader.pos < fieldEnd) {
        const [innerNo, innerType] = reader.tag();
        if (innerNo === 1) {
          const addressEnd = messageEnd(reader, innerType);
          additional.address ??= newAddress();
          readAddress(reader, addressEnd, additional.address);
        } else {
          reader.skip(innerType, innerNo);
        }
      }
      target.additionalAddresses.push(additional);
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
}

function readLbEndpoint(reader: BinaryReader, end: number): LbEndpointView {
  const target: LbEndpointView = { hostIdentifier: { case: undefined }, healthStatus: 0 };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      const fieldEnd = messageEnd(reader, wireType);
      let endpoint: EndpointView;
      if (target.hostIdentifier.case === "endpoint") {
        endpoint = target.hostIdentifier.value;
      } else {
        endpoint = { hostname: "", additionalAddresses: [] };
        target.hostIdentifier = { case: "endpoint", value: endpoint };
      }
      readEndpoint(reader, fieldEnd, endpoint);
    } else if (fieldNo === 5) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.hostIdentifier = { case: "endpointName", value: reader.string() };
    } else if (fieldNo === 2) {
      expect(reader, wireType, WireType.Varint);
      target.healthStatus = reader.int32();
    } else if (fieldNo === 4) {
      const fieldEnd = messageEnd(reader, wireType);
      target.loadBalancingWeight = readUInt32Value(reader, fieldEnd, target.loadBalancingWeight);
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
  return target;
}

function readLocality(reader: BinaryReader, end: number, target: { region: string; zone: string; subZone: string }) {
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo >= 1 && fieldNo <= 3) {
      expect(reader, wireType, WireType.LengthDelimited);
      const value = reader.string();
      if (fieldNo === 1) target.region = value;
      else if (fieldNo === 2) target.zone = value;
      else target.subZone = value;
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
}

function readLocalityLbEndpoints(reader: BinaryReader, end: number): LocalityLbEndpointsView {
  const target: LocalityLbEndpointsView = { lbEndpoints: [], priority: 0 };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) {
      target.lbEndpoints.push(readLbEndpoint(reader, messageEnd(reader, wireType)));
    } else if (fieldNo === 1) {
      const fieldEnd = messageEnd(reader, wireType);
      target.locality ??= { region: "", zone: "", subZone: "" };
      readLocality(reader, fieldEnd, target.locality);
    } else if (fieldNo === 3) {
      const fieldEnd = messageEnd(reader, wireType);
      target.loadBalancingWeight = readUInt32Value(reader, fieldEnd, target.loadBalancingWeight);
    } else if (fieldNo === 5) {
      expect(reader, wireType, WireType.Varint);
      target.priority = reader.uint32();
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
  return target;
}

function readDropOverload(reader: BinaryReader, end: number): DropOverloadView {
  const target: DropOverloadView = { category: "" };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.category = reader.string();
    } else if (fieldNo === 2) {
      const fieldEnd = messageEnd(reader, wireType);
      target.dropPercentage ??= { numerator: 0, denominator: 0 };
      const percentage = target.dropPercentage;
      while (reader.pos < fieldEnd) {
        const [innerNo, innerType] = reader.tag();
        if (innerNo === 1 || innerNo === 2) {
          expect(reader, innerType, WireType.Varint);
          if (innerNo === 1) percentage.numerator = reader.uint32();
          else percentage.denominator = reader.int32();
        } else {
          reader.skip(innerType, innerNo);
        }
      }
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
  return target;
}

/** Decodes the EDS-relevant view of a serialized ClusterLoadAssignment; throws on malformed input. */
export function readClusterLoadAssignment(bytes: Uint8Array): ClusterLoadAssignmentView {
  const reader = new BinaryReader(bytes);
  const target: ClusterLoadAssignmentView = { clusterName: "", endpoints: [] };
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) {
      target.endpoints.push(readLocalityLbEndpoints(reader, messageEnd(reader, wireType)));
    } else if (fieldNo === 1) {
      expect(reader, wireType, WireType.LengthDelimited);
      target.clusterName = reader.string();
    } else if (fieldNo === 4) {
      const fieldEnd = messageEnd(reader, wireType);
      target.policy ??= { dropOverloads: [] };
      const policy = target.policy;
      while (reader.pos < fieldEnd) {
        const [innerNo, innerType] = reader.tag();
        if (innerNo === 2) policy.dropOverloads.push(readDropOverload(reader, messageEnd(reader, innerType)));
        else reader.skip(innerType, innerNo);
      }
    } else {
      reader.skip(wireType, fieldNo);
    }
  }
  return target;
}
