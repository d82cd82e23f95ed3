import { describe, expect, test } from "vitest";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "../src/index.js";
import type { Harness, SotwTestStream } from "./ads-client.js";
import { namesOf, newestStream, shareServer, subscribe } from "./util.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const listener = (name: string, route = "r") => buildListener({ name, routeConfigName: route });
const route = (name: string, cluster = "c") => buildRouteConfiguration({ name, cluster });
const cluster = (name: string, eds = "") => buildCluster({ name, edsServiceName: eds });
const endpoints = (name: string, port = 80) =>
  buildClusterLoadAssignment({ clusterName: name, localities: [{ endpoints: [`127.0.0.1:${port}`] }] });

const subscribed = (typeUrl: string, names: string[]) => subscribe(server, h, typeUrl, names);

async function nextNames(s: SotwTestStream, ackNames?: string[]) {
  const response = await s.next();
  if (ackNames) await s.ack(response, ackNames);
  return namesOf(response);
}

describe("LDS and CDS carry the full state", () => {
  test("a change to one listener sends every subscribed listener", async () => {
    server.setResources([listener("l1"), listener("l2"), listener("l3")]);
    const { s, first } = await subscribed(LDS_TYPE_URL, ["l1", "l2"]);
    expect(namesOf(first)).toEqual(["l1", "l2"]);
    server.setResource(listener("l1", "other"));
    expect(await nextNames(s)).toEqual(["l1", "l2"]);
  });

  test("a change to an unsubscribed cluster sends nothing", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s } = await subscribed(CDS_TYPE_URL, ["c1"]);
    server.setResource(cluster("c2", "changed"));
    await s.none();
  });

  test("a newly subscribed cluster comes with the others", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s, first } = await subscribed(CDS_TYPE_URL, ["c1"]);
    await s.ack(first, ["c1", "c2"]);
    expect(await nextNames(s)).toEqual(["c1", "c2"]);
  });

  test("a removal sends the remaining set", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s } = await subscribed(CDS_TYPE_URL, ["c1", "c2"]);
    server.removeResource(CDS_TYPE_URL, "c1");
    expect(await nextNames(s, ["c1", "c2"])).toEqual(["c2"]);
    server.removeResource(CDS_TYPE_URL, "c2");
    expect(await nextNames(s)).toEqual([]);
  });

  test("unsubscribing sends nothing, and later changes to the dropped name send nothing", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s, first } = await subscribed(CDS_TYPE_URL, ["c1", "c2"]);
    await s.ack(first, ["c1"]);
    await s.none();
    server.setResource(cluster("c2", "changed"));
    await s.none();
    server.setResource(cluster("c1", "changed"));
    expect(await nextNames(s)).toEqual(["c1"]);
  });

  test("a name that does not exist gets no response until it exists", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["later"] });
    await s.none();
    server.setResource(cluster("later"));
    expect(await nextNames(s)).toEqual(["later"]);
  });
});

describe("RDS and EDS carry only what changed", () => {
  test("a change to one route config sends only that one", async () => {
    server.setResources([route("r1"), route("r2")]);
    const { s, first } = await subscribed(RDS_TYPE_URL, ["r1", "r2"]);
    expect(namesOf(first)).toEqual(["r1", "r2"]);
    server.setResource(route("r2", "other"));
    expect(await nextNames(s)).toEqual(["r2"]);
  });

  test("a newly subscribed endpoint set comes alone", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const { s, first } = await subscribed(EDS_TYPE_URL, ["e1"]);
    await s.ack(first, ["e1", "e2"]);
    expect(await nextNames(s)).toEqual(["e2"]);
  });

  test("a removal sends nothing", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const { s } = await subscribed(EDS_TYPE_URL, ["e1", "e2"]);
    server.removeResource(EDS_TYPE_URL, "e1");
    await s.none();
  });

  test("a re-subscribed name is sent again", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const { s, first } = await subscribed(EDS_TYPE_URL, ["e1", "e2"]);
    await s.ack(first, ["e1"]);
    await s.none();
    await s.ack(first, ["e1", "e2"]);
    expect(await nextNames(s)).toEqual(["e2"]);
  });

  test("an empty name list subscribes to nothing", async () => {
    server.setResources([route("r1")]);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: RDS_TYPE_URL, resourceNames: [] });
    await s.none();
  });
});

describe("wildcard", () => {
  test("an LDS/CDS first request naming nothing gets every resource, and stays wildcard while it names nothing", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s, first } = await subscribed(CDS_TYPE_URL, []);
    expect(namesOf(first)).toEqual(["c1", "c2"]);
    server.setResource(cluster("c3"));
    expect(await nextNames(s, [])).toEqual(["c1", "c2", "c3"]);
    expect(newestStream(server).types[0]?.wildcard).toBe(true);
    server.removeResource(CDS_TYPE_URL, "c1");
    expect(await nextNames(s)).toEqual(["c2", "c3"]);
  });

  test("with nothing to serve, the first wildcard response is empty", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: LDS_TYPE_URL, resourceNames: [] });
    const response = await s.next();
    expect(response.resources).toEqual([]);
    expect(response.versionInfo).toBe(server.typeVersion(LDS_TYPE_URL) || "0");
    await s.ack(response, []);
    await s.none();
    server.setResource(listener("l1"));
    expect(await nextNames(s)).toEqual(["l1"]);
  });

  test("`*` subscribes to everything, on any type, alongside names", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const { s, first } = await subscribed(EDS_TYPE_URL, ["*", "e1"]);
    expect(namesOf(first)).toEqual(["e1", "e2"]);
    const info = newestStream(server).types[0];
    expect(info?.wildcard).toBe(true);
    expect(info?.resourceNames).toEqual(["e1"]);
    server.setResource(endpoints("e3"));
    expect(await nextNames(s)).toEqual(["e3"]);
  });

  test("naming resources without `*` leaves the wildcard", async () => {
    server.setResources([cluster("c1"), cluster("c2")]);
    const { s, first } = await subscribed(CDS_TYPE_URL, []);
    await s.ack(first, ["c1"]);
    await s.none();
    expect(newestStream(server).types[0]?.wildcard).toBe(false);
    server.setResource(cluster("c2", "changed"));
    await s.none();
    // Back to an empty list: no longer wildcard, so it subscribes to nothing.
    await s.ack(first, []);
    await s.none();
    server.setResource(cluster("c1", "changed"));
    await s.none();
  });
});
