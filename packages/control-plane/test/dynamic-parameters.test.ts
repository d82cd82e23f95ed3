// DPDS served per node over real HTTP/2, in both protocols: `setDynamicParameters` gives a node its
// DynamicParameterConstraintsMap, always marked do_not_cache, while it keeps every other resource of its set.
import { create } from "@bufbuild/protobuf";
import { canonicalText, exists, fromProto, value } from "@xdskit/constraint-matcher";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { describe, expect, test } from "vitest";
import {
  buildDynamicParameterConstraintsMap,
  CDS_TYPE_URL,
  DEFAULT_DYNAMIC_PARAMETERS_NAME,
  DPDS_TYPE_URL,
  type ManagementServer,
} from "../src/index.js";
import type { Harness } from "./ads-client.js";
import { shareServer } from "./util.js";
import { type Protocol, type Seen, variantClient } from "./variant-client.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const CLUSTER = "envoy.config.cluster.v3.Cluster";
const DPDS = { name: DEFAULT_DYNAMIC_PARAMETERS_NAME };
const dpds = (constraints: string) => `${DEFAULT_DYNAMIC_PARAMETERS_NAME}:${CLUSTER}=${constraints}`;
const cluster = (name: string) => create(ClusterSchema, { name, edsClusterConfig: { serviceName: name } });
const view = (seen: Seen) => ({ resources: seen.resources, removed: seen.removed, doNotCache: seen.doNotCache });

describe.each(["sotw", "delta"] as Protocol[])("DPDS over %s", (protocol) => {
  const sotw = protocol === "sotw";

  test("each node gets its own DPDS resource, marked do_not_cache, and keeps the resources of its set", async () => {
    // Steps: DPDS for node-a (env=prod, keyed by type name) and node-b (env=test, keyed by type URL), a plain
    // cluster in the default set; node-a gets its DPDS resource and the cluster, node-b its own DPDS resource,
    // node-c none (delta: told it does not exist); node-a's changes -> only node-a hears; it is cleared -> delta
    // clients are told it is gone, SotW clients keep it (not a full-state type).
    server.setResource(cluster("c0"));
    server.setDynamicParameters("node-a", { [CLUSTER]: "env=prod" });
    server.setDynamicParameters({ nodeId: "node-b" }, { [CDS_TYPE_URL]: value("env", "test") });
    const a = variantClient(h, protocol, "node-a");
    const b = variantClient(h, protocol, "node-b");
    const c = variantClient(h, protocol, "node-c");
    await a.subscribe(DPDS_TYPE_URL, [DPDS]);
    const first = await a.next();
    expect(view(first)).toEqual({ resources: [dpds("env=prod")], removed: [], doNotCache: [dpds("env=prod")] });
    await a.ack(first);
    await a.subscribe(CDS_TYPE_URL, [{ name: "c0" }]);
    const clusters = await a.next();
    expect(clusters.resources).toEqual(["c0:c0"]);
    await a.ack(clusters);
    await b.subscribe(DPDS_TYPE_URL, [DPDS]);
    const ofB = await b.next();
    expect(view(ofB).resources).toEqual([dpds("env=test")]);
    await b.ack(ofB);
    await c.subscribe(DPDS_TYPE_URL, [DPDS]);
    if (sotw) await c.none();
    else
      expect(view(await c.next())).toEqual({
        resources: [],
        removed: [DEFAULT_DYNAMIC_PARAMETERS_NAME],
        doNotCache: [],
      });

    server.setDynamicParameters("node-a", { [CLUSTER]: "env=canary" });
    const changed = await a.next();
    expect(view(changed).resources).toEqual([dpds("env=canary")]);
    await a.ack(changed);
    await b.none();

    expect(server.clearDynamicParameters("node-a")).toBe(true);
    expect(server.clearDynamicParameters("node-a")).toBe(false);
    if (sotw) await a.none();
    else expect(view(await a.next()).removed).toEqual([DEFAULT_DYNAMIC_PARAMETERS_NAME]);
    await b.none();
    server.clearDynamicParameters("node-b");
  });

  test("a DPDS resource set like any other resource, in a node scope, is marked do_not_cache too", async () => {
    const scope = server.forNode("scoped");
    try {
      scope.setResource(buildDynamicParameterConstraintsMap({ [CLUSTER]: "zone=a" }), { name: "dpds" });
      const client = variantClient(h, protocol, "scoped");
      await client.subscribe(DPDS_TYPE_URL, [{ name: "dpds" }]);
      const label = `dpds:${CLUSTER}=zone=a`;
      expect(view(await client.next())).toEqual({ resources: [label], removed: [], doNotCache: [label] });
    } finally {
      scope.dispose();
    }
  });
});

describe("buildDynamicParameterConstraintsMap", () => {
  test("keys by type name (a type URL loses its prefix), constraints canonical, a type without constraints left out", () => {
    const map = buildDynamicParameterConstraintsMap({
      [CDS_TYPE_URL]: "zone=a && env=prod",
      "envoy.config.listener.v3.Listener": exists("canary"),
      "envoy.config.route.v3.RouteConfiguration": "true",
    });
    const texts = Object.fromEntries(
      Object.entries(map.resourceTypeConstraints).map(([type, c]) => [type, canonicalText(fromProto(c))]),
    );
    expect(texts).toEqual({ [CLUSTER]: "env=prod && zone=a", "envoy.config.listener.v3.Listener": "exists(canary)" });
  });

  test("refuses a type given twice, an empty type name, and constraints without a wire form, naming them", () => {
    expect(() => buildDynamicParameterConstraintsMap({ [CLUSTER]: "a=1", [CDS_TYPE_URL]: "a=2" })).toThrow(
      `${CLUSTER} is given twice`,
    );
    expect(() => buildDynamicParameterConstraintsMap({ "type.googleapis.com/": "a=1" })).toThrow("type name is empty");
    expect(() => buildDynamicParameterConstraintsMap({ [CLUSTER]: "shard in [1..2]" })).toThrow(
      `dynamic parameters of ${CLUSTER}: bad constraints`,
    );
    expect(() => server.setDynamicParameters("n", { [CLUSTER]: "a=" })).toThrow("bad constraints");
  });
});
