import { create, createRegistry } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyUnpack, DurationSchema } from "@bufbuild/protobuf/wkt";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, test } from "vitest";
import {
  buildCluster,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
  RESOURCE_WRAPPER_TYPE_URL,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";
import { namesOf, setChain, shareServer, subscribe } from "./util.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

describe("the resource API", () => {
  test("names come from the message; get, list and typeVersion read the set", () => {
    setChain(server);
    expect(server.resourceNames(LDS_TYPE_URL)).toEqual(["listener"]);
    expect(server.resourceNames(RDS_TYPE_URL)).toEqual(["route"]);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual(["cluster"]);
    expect(server.resourceNames(EDS_TYPE_URL)).toEqual(["cluster"]);
    expect(server.getResource(CDS_TYPE_URL, "cluster")?.$typeName).toBe("envoy.config.cluster.v3.Cluster");
    expect(server.getResource(CDS_TYPE_URL, "nope")).toBeUndefined();
    expect(server.typeVersion("type.googleapis.com/never.Set")).toBe("");
  });

  test("one call gives one version per type; an identical resource keeps its version unless forced", () => {
    server.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    const version = server.typeVersion(CDS_TYPE_URL);
    expect(server.setResource(buildCluster({ name: "a" }))).toBe(version);
    expect(server.typeVersion(CDS_TYPE_URL)).toBe(version);
    const forced = server.setResource(buildCluster({ name: "a" }), { force: true });
    expect(Number(forced)).toBeGreaterThan(Number(version));
  });

  test("setSnapshot replaces everything; unchanged resources are not sent again", async () => {
    server.setResources([
      buildRouteConfiguration({ name: "r1", cluster: "c" }),
      buildRouteConfiguration({ name: "r2", cluster: "c" }),
    ]);
    const { s } = await subscribe(server, h, RDS_TYPE_URL, ["r1", "r2"]);
    server.setSnapshot([
      buildRouteConfiguration({ name: "r1", cluster: "c" }),
      buildRouteConfiguration({ name: "r2", cluster: "changed" }),
      buildCluster({ name: "c" }),
    ]);
    expect(namesOf(await s.next())).toEqual(["r2"]);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual(["c"]);
    server.setSnapshot([]);
    expect(server.resourceNames(RDS_TYPE_URL)).toEqual([]);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual([]);
  });

  test("changes in one synchronous run are pushed as one response", async () => {
    server.setResource(buildCluster({ name: "a" }));
    const { s } = await subscribe(server, h, CDS_TYPE_URL, []);
    server.setResource(buildCluster({ name: "b" }));
    server.setResource(buildCluster({ name: "c" }));
    server.removeResource(CDS_TYPE_URL, "a");
    expect(namesOf(await s.next())).toEqual(["b", "c"]);
    await s.none();
  });

  test("bad input is refused before anything changes", () => {
    server.setResource(buildCluster({ name: "keep" }));
    const version = server.typeVersion(CDS_TYPE_URL);
    expect(() => server.setResource(buildCluster({ name: "" }))).toThrow(/has no name/);
    expect(() => server.setSnapshot([buildCluster({ name: "x" }), buildCluster({ name: "x" })])).toThrow(/duplicate/);
    expect(() => server.setResource(create(AnySchema, { typeUrl: CDS_TYPE_URL }))).toThrow(/options.name/);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual(["keep"]);
    expect(server.typeVersion(CDS_TYPE_URL)).toBe(version);
  });

  test("messages outside @xdskit/protos need a schema or the server's typeRegistry", async () => {
    const duration = create(DurationSchema, { seconds: 5n });
    const typeUrl = "type.googleapis.com/google.protobuf.Duration";
    expect(() => server.setResource(duration, { name: "d" })).toThrow(/unknown message type google.protobuf.Duration/);
    server.setResource(duration, { name: "d", schema: DurationSchema });
    expect(server.resourceNames(typeUrl)).toEqual(["d"]);
    await using custom = await createManagementServer({ typeRegistry: createRegistry(DurationSchema) });
    custom.setResource(duration, { name: "d" });
    expect(custom.getResource(typeUrl, "d")).toEqual(duration);
  });
});

describe("what goes on the wire", () => {
  test("wrapResources wraps every resource in Resource with its name and version", async () => {
    await using wrapping = await createManagementServer({ wrapResources: true });
    const wh = createHarness(wrapping.url);
    try {
      const version = wrapping.setResource(buildCluster({ name: "c1" }));
      const { first } = await subscribe(wrapping, wh, CDS_TYPE_URL, ["c1"]);
      const [any] = first.resources;
      expect(any?.typeUrl).toBe(RESOURCE_WRAPPER_TYPE_URL);
      const wrapper = anyUnpack(any as Any, ResourceSchema);
      expect(wrapper?.name).toBe("c1");
      expect(wrapper?.version).toBe(version);
      expect(wrapper?.resource?.typeUrl).toBe(CDS_TYPE_URL);
    } finally {
      wh.cleanup();
    }
  });

  test("a resource's own wrap flag wins over the server's", async () => {
    server.setResources([{ resource: buildCluster({ name: "wrapped" }), wrap: true }, buildCluster({ name: "plain" })]);
    const { first } = await subscribe(server, h, CDS_TYPE_URL, ["wrapped", "plain"]);
    expect(first.resources.map((a) => a.typeUrl)).toEqual([RESOURCE_WRAPPER_TYPE_URL, CDS_TYPE_URL]);
    expect(namesOf(first)).toEqual(["wrapped", "plain"]);
  });

  test("a resource can be served under another type, or as raw bytes, for testing clients", async () => {
    server.setResources([
      { resource: create(ListenerSchema, { name: "intruder" }), typeUrl: CDS_TYPE_URL },
      { resource: create(AnySchema, { typeUrl: CDS_TYPE_URL, value: new Uint8Array([0x0a, 0x7f]) }), name: "garbage" },
    ]);
    const { first } = await subscribe(server, h, CDS_TYPE_URL, ["intruder", "garbage"]);
    expect(first.resources.map((a) => a.typeUrl)).toEqual([LDS_TYPE_URL, CDS_TYPE_URL]);
    expect(first.resources[1]?.value).toEqual(new Uint8Array([0x0a, 0x7f]));
    expect(anyUnpack(first.resources[0] as Any, ListenerSchema)?.name).toBe("intruder");
  });

  test("controlPlaneId is sent in every response", async () => {
    await using identified = await createManagementServer({ controlPlaneId: "cp-1" });
    const ih = createHarness(identified.url);
    try {
      identified.setResource(buildCluster({ name: "c1" }));
      const { first } = await subscribe(identified, ih, CDS_TYPE_URL, ["c1"]);
      expect(first.controlPlane?.identifier).toBe("cp-1");
    } finally {
      ih.cleanup();
    }
  });
});
