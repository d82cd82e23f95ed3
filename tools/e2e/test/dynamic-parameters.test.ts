// DPDS end to end: @xdskit/control-plane serves each node its DynamicParameterConstraintsMap, marked do_not_cache;
// @xdskit/xds-client clients of two nodes watch it (as a resource type of their own) over SotW and delta.
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { canonicalText, fromProto } from "@xdskit/constraint-matcher";
import {
  createManagementServer,
  DEFAULT_DYNAMIC_PARAMETERS_NAME,
  DPDS_TYPE_URL,
  type ManagementServer,
} from "@xdskit/control-plane";
import { DynamicParameterConstraintsMapSchema } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { ResourceType, XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type ApiType, clientFor, recorder } from "./support.js";

/** The DPDS resource as `type=constraints` lines. */
const dpdsType: ResourceType<string[]> = {
  typeUrl: DPDS_TYPE_URL,
  typeName: "DynamicParameterConstraintsMap",
  allResourcesRequiredInSotW: false,
  decode(any) {
    const map = anyUnpack(any, DynamicParameterConstraintsMapSchema);
    if (!map) return { ok: false, error: `not a DynamicParameterConstraintsMap: ${any.typeUrl}` };
    const lines = Object.entries(map.resourceTypeConstraints).map(
      ([type, constraints]) => `${type}=${canonicalText(fromProto(constraints))}`,
    );
    return { ok: true, name: "", value: lines.sort() };
  },
};

const CLUSTER = "envoy.config.cluster.v3.Cluster";
let server: ManagementServer;
const clients: XdsClient[] = [];

beforeEach(async () => {
  server = await createManagementServer();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe.each(["GRPC", "DELTA_GRPC"] as ApiType[])("DPDS to @xdskit/xds-client over %s", (apiType) => {
  test("each node's client gets its own parameters, marked do_not_cache; a change reaches that node only", async () => {
    server.setDynamicParameters("node-a", { [CLUSTER]: "env=prod" });
    server.setDynamicParameters("node-b", { [CLUSTER]: "env=test && zone=b" });
    const a = clientFor(server, apiType, "node-a");
    const b = clientFor(server, apiType, "node-b");
    clients.push(a, b);
    const ofA = recorder<string[]>((lines) => lines.join(";"));
    const ofB = recorder<string[]>((lines) => lines.join(";"));
    a.watch(dpdsType, DEFAULT_DYNAMIC_PARAMETERS_NAME, ofA);
    b.watch(dpdsType, DEFAULT_DYNAMIC_PARAMETERS_NAME, ofB);
    expect(await ofA.take(1)).toEqual([`resource:${CLUSTER}=env=prod`]);
    expect(await ofB.take(1)).toEqual([`resource:${CLUSTER}=env=test && zone=b`]);

    // On the wire: wrapped in Resource with cache_control.do_not_cache, for both nodes.
    const sent = server.hooks
      .history()
      .flatMap((e) => (e.type === "response" && e.typeUrl === DPDS_TYPE_URL ? [e] : []))
      .map((e) =>
        e.kind === "delta"
          ? e.response.resources
          : e.response.resources.map((any) => anyUnpack(any, ResourceSchema) as Resource),
      );
    expect(sent.flat().map((r) => [r.name, r.cacheControl?.doNotCache])).toEqual([
      [DEFAULT_DYNAMIC_PARAMETERS_NAME, true],
      [DEFAULT_DYNAMIC_PARAMETERS_NAME, true],
    ]);

    const mark = server.hooks.mark();
    server.setDynamicParameters("node-a", { [CLUSTER]: "env=canary" });
    expect(await ofA.take(1)).toEqual([`resource:${CLUSTER}=env=canary`]);
    await server.hooks.waitForRequest((r) => r.typeUrl === DPDS_TYPE_URL && r.disposition === "ack", { after: mark });
    expect(ofB.events).toEqual([]);
  });
});
