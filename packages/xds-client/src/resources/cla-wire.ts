import { BinaryReader } from "@bufbuild/protobuf/wire";
import { UInt32ValueSchema } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema } from "@xdskit/protos/envoy/config/core/v3/address_pb";
import { LocalitySchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
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
import { FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import { walkField } from "./wire-walk.js";

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
 * of every message, which dominates EDS cost at 100,000 endpoints. It accepts and rejects exactly what `fromBinary`
 * does (see wire-walk.ts for its rules, which every field not kept here goes through) and reads the kept fields to
 * the same values: the last scalar wins, a repeated singular message field is merged into the earlier one, and a
 * oneof takes its last member (merged when it repeats the current one). Strings are checked as UTF-8
 * (`string(true)`), as `fromBinary` checks proto3 strings. Each reader takes the depth of the message it reads, the
 * top-level message being 1.
 */

/** The end of the message whose length comes next; an end past the buffer fails at once (`fromBinary` fails later). */
function messageEnd(reader: BinaryReader): number {
  const end = reader.uint32() + reader.pos;
  if (end > reader.len) throw new RangeError("premature EOF");
  return end;
}

/** google.protobuf.UInt32Value merged over `previous` (0 when unset). */
function readUInt32Value(reader: BinaryReader, depth: number, previous: number | undefined): number {
  const end = messageEnd(reader);
  let value = previous ?? 0;
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) value = reader.uint32();
    else walkField(reader, UInt32ValueSchema, fieldNo, wireType, depth);
  }
  return value;
}

function readSocketAddress(reader: BinaryReader, depth: number, target: SocketAddressView): void {
  const end = messageEnd(reader);
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) target.address = reader.string(true);
    else if (fieldNo === 3) target.portSpecifier = { case: "portValue", value: reader.uint32() };
    else if (fieldNo === 4) target.portSpecifier = { case: "namedPort", value: reader.string(true) };
    else walkField(reader, SocketAddressSchema, fieldNo, wireType, depth);
  }
}

function readAddress(reader: BinaryReader, depth: number, previous: AddressView | undefined): AddressView {
  const end = messageEnd(reader);
  const target = previous ?? { address: { case: undefined } };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      let socket: SocketAddressView;
      if (target.address.case === "socketAddress") {
        socket = target.address.value;
      } else {
        socket = { address: "", portSpecifier: { case: undefined } };
        target.address = { case: "socketAddress", value: socket };
      }
      readSocketAddress(reader, depth + 1, socket);
    } else {
      walkField(reader, AddressSchema, fieldNo, wireType, depth);
      // Pipe and EnvoyInternalAddress are read for validity only: EDS needs to know they were chosen.
      if (fieldNo === 2) target.address = { case: "pipe", value: {} };
      else if (fieldNo === 3) target.address = { case: "envoyInternalAddress", value: {} };
    }
  }
  return target;
}

function readAdditionalAddress(reader: BinaryReader, depth: number): { address?: AddressView } {
  const end = messageEnd(reader);
  const target: { address?: AddressView } = {};
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) target.address = readAddress(reader, depth + 1, target.address);
    else walkField(reader, Endpoint_AdditionalAddressSchema, fieldNo, wireType, depth);
  }
  return target;
}

function readEndpoint(reader: BinaryReader, depth: number, target: EndpointView): void {
  const end = messageEnd(reader);
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) target.address = readAddress(reader, depth + 1, target.address);
    else if (fieldNo === 3) target.hostname = reader.string(true);
    else if (fieldNo === 4) target.additionalAddresses.push(readAdditionalAddress(reader, depth + 1));
    else walkField(reader, EndpointSchema, fieldNo, wireType, depth);
  }
}

function readLbEndpoint(reader: BinaryReader, depth: number): LbEndpointView {
  const end = messageEnd(reader);
  const target: LbEndpointView = { hostIdentifier: { case: undefined }, healthStatus: 0 };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      let endpoint: EndpointView;
      if (target.hostIdentifier.case === "endpoint") {
        endpoint = target.hostIdentifier.value;
      } else {
        endpoint = { hostname: "", additionalAddresses: [] };
        target.hostIdentifier = { case: "endpoint", value: endpoint };
      }
      readEndpoint(reader, depth + 1, endpoint);
    } else if (fieldNo === 2) {
      target.healthStatus = reader.int32();
    } else if (fieldNo === 4) {
      target.loadBalancingWeight = readUInt32Value(reader, depth + 1, target.loadBalancingWeight);
    } else if (fieldNo === 5) {
      target.hostIdentifier = { case: "endpointName", value: reader.string(true) };
    } else {
      walkField(reader, LbEndpointSchema, fieldNo, wireType, depth);
    }
  }
  return target;
}

type LocalityView = NonNullable<LocalityLbEndpointsView["locality"]>;

function readLocality(reader: BinaryReader, depth: number, previous: LocalityView | undefined): LocalityView {
  const end = messageEnd(reader);
  const target = previous ?? { region: "", zone: "", subZone: "" };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) target.region = reader.string(true);
    else if (fieldNo === 2) target.zone = reader.string(true);
    else if (fieldNo === 3) target.subZone = reader.string(true);
    else walkField(reader, LocalitySchema, fieldNo, wireType, depth);
  }
  return target;
}

function readLocalityLbEndpoints(reader: BinaryReader, depth: number): LocalityLbEndpointsView {
  const end = messageEnd(reader);
  const target: LocalityLbEndpointsView = { lbEndpoints: [], priority: 0 };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) {
      target.lbEndpoints.push(readLbEndpoint(reader, depth + 1));
    } else if (fieldNo === 1) {
      target.locality = readLocality(reader, depth + 1, target.locality);
    } else if (fieldNo === 3) {
      target.loadBalancingWeight = readUInt32Value(reader, depth + 1, target.loadBalancingWeight);
    } else if (fieldNo === 5) {
      target.priority = reader.uint32();
    } else {
      walkField(reader, LocalityLbEndpointsSchema, fieldNo, wireType, depth);
    }
  }
  return target;
}

type FractionalPercentView = NonNullable<DropOverloadView["dropPercentage"]>;

function readFractionalPercent(
  reader: BinaryReader,
  depth: number,
  previous: FractionalPercentView | undefined,
): FractionalPercentView {
  const end = messageEnd(reader);
  const target = previous ?? { numerator: 0, denominator: 0 };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) target.numerator = reader.uint32();
    else if (fieldNo === 2) target.denominator = reader.int32();
    else walkField(reader, FractionalPercentSchema, fieldNo, wireType, depth);
  }
  return target;
}

function readDropOverload(reader: BinaryReader, depth: number): DropOverloadView {
  const end = messageEnd(reader);
  const target: DropOverloadView = { category: "" };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) {
      target.category = reader.string(true);
    } else if (fieldNo === 2) {
      target.dropPercentage = readFractionalPercent(reader, depth + 1, target.dropPercentage);
    } else {
      walkField(reader, ClusterLoadAssignment_Policy_DropOverloadSchema, fieldNo, wireType, depth);
    }
  }
  return target;
}

type PolicyView = NonNullable<ClusterLoadAssignmentView["policy"]>;

function readPolicy(reader: BinaryReader, depth: number, previous: PolicyView | undefined): PolicyView {
  const end = messageEnd(reader);
  const target = previous ?? { dropOverloads: [] };
  while (reader.pos < end) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) target.dropOverloads.push(readDropOverload(reader, depth + 1));
    else walkField(reader, ClusterLoadAssignment_PolicySchema, fieldNo, wireType, depth);
  }
  return target;
}

/** Decodes the EDS-relevant view of a serialized ClusterLoadAssignment; throws where `fromBinary` throws. */
export function readClusterLoadAssignment(bytes: Uint8Array): ClusterLoadAssignmentView {
  const reader = new BinaryReader(bytes);
  const target: ClusterLoadAssignmentView = { clusterName: "", endpoints: [] };
  const depth = 1;
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 2) target.endpoints.push(readLocalityLbEndpoints(reader, depth + 1));
    else if (fieldNo === 1) target.clusterName = reader.string(true);
    else if (fieldNo === 4) target.policy = readPolicy(reader, depth + 1, target.policy);
    else walkField(reader, ClusterLoadAssignmentSchema, fieldNo, wireType, depth);
  }
  return target;
}
