// Two small resource types for the HTTP/2 tests, independent of the real LDS/RDS/CDS/EDS validation: a listener
// (every resource in each SotW response) and endpoints (responses carry what changed).
import { create, fromBinary } from "@bufbuild/protobuf";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import type { ResourceType } from "@xdskit/xds-client";

export interface TestListener {
  readonly name: string;
  readonly statPrefix: string;
}

/** Invalid when the stat prefix starts with "bad". */
export const testListenerType: ResourceType<TestListener> = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  typeName: "TestListener",
  allResourcesRequiredInSotW: true,
  decode(any) {
    const message = fromBinary(ListenerSchema, any.value);
    if (message.statPrefix.startsWith("bad"))
      return { ok: false, name: message.name, error: "stat_prefix: starts with bad" };
    return {
      ok: true,
      name: message.name,
      value: Object.freeze({ name: message.name, statPrefix: message.statPrefix }),
    };
  },
};

export interface TestEndpoints {
  readonly name: string;
  readonly localities: number;
}

export const testEndpointsType: ResourceType<TestEndpoints> = {
  typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  typeName: "TestEndpoints",
  allResourcesRequiredInSotW: false,
  decode(any) {
    const message = fromBinary(ClusterLoadAssignmentSchema, any.value);
    return {
      ok: true,
      name: message.clusterName,
      value: Object.freeze({ name: message.clusterName, localities: message.endpoints.length }),
    };
  },
};

export const LDS = testListenerType.typeUrl;
export const EDS = testEndpointsType.typeUrl;
export const LDS_TYPE_NAME = "envoy.config.listener.v3.Listener";
export const EDS_TYPE_NAME = "envoy.config.endpoint.v3.ClusterLoadAssignment";

export const listener = (name: string, statPrefix: string) => create(ListenerSchema, { name, statPrefix });

export const endpoints = (name: string, localities: number) =>
  create(ClusterLoadAssignmentSchema, { clusterName: name, endpoints: Array.from({ length: localities }, () => ({})) });

export const describeListener = (l: TestListener) => `${l.name}:${l.statPrefix}`;
export const describeEndpoints = (e: TestEndpoints) => `${e.name}:${e.localities}`;
