// Two small resource types for the core's tests, independent of the real LDS/RDS/CDS/EDS validation.
import { create, fromBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { type Listener, ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { ResourceType } from "../../src/index.js";

export interface TestListener {
  readonly name: string;
  readonly statPrefix: string;
}

/** LDS-like: every resource must be in each SotW response. Invalid when the name starts with "bad". */
export const testListenerType: ResourceType<TestListener> = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  typeName: "TestListener",
  allResourcesRequiredInSotW: true,
  decode(any) {
    const message = fromBinary(ListenerSchema, any.value);
    if (message.name.startsWith("bad")) return { ok: false, name: message.name, error: "name: starts with bad" };
    if (message.name === "") return { ok: false, error: "name: empty" };
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

/** EDS-like: responses carry only what changed. */
export const testEndpointsType: ResourceType<TestEndpoints> = {
  typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  typeName: "TestEndpoints",
  allResourcesRequiredInSotW: false,
  decode(any) {
    const message = fromBinary(ClusterLoadAssignmentSchema, any.value);
    if (message.clusterName.startsWith("bad"))
      return { ok: false, name: message.clusterName, error: "cluster_name: starts with bad" };
    return {
      ok: true,
      name: message.clusterName,
      value: Object.freeze({ name: message.clusterName, localities: message.endpoints.length }),
    };
  },
};

export function listener(name: string, statPrefix = ""): Listener {
  return create(ListenerSchema, { name, statPrefix });
}

export function listenerAny(name: string, statPrefix = ""): Any {
  return anyPack(ListenerSchema, listener(name, statPrefix));
}

export function endpointsAny(name: string, localities = 1): Any {
  const message: ClusterLoadAssignment = create(ClusterLoadAssignmentSchema, {
    clusterName: name,
    endpoints: Array.from({ length: localities }, () => ({})),
  });
  return anyPack(ClusterLoadAssignmentSchema, message);
}

/** `any` wrapped in `envoy.service.discovery.v3.Resource` under `name` (which may differ from the name inside). */
export function wrappedAny(name: string, any: Any): Any {
  return anyPack(ResourceSchema, create(ResourceSchema, { name, resource: any }));
}

/** A78's `grpc.xds.resource_type` value: the type URL without its `type.googleapis.com/` prefix. */
export function typeName(typeUrl: string): string {
  const prefix = "type.googleapis.com/";
  if (!typeUrl.startsWith(prefix)) throw new Error(`not a type URL: ${typeUrl}`);
  return typeUrl.slice(prefix.length);
}
