import { Code } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import {
  buildCluster,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "../src/index.js";
import type { Harness } from "./ads-client.js";
import { errorNamesOf, namesOf, shareServer, subscribe } from "./util.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const denied = { code: Code.PermissionDenied, message: "not for this node" };

const subscribed = (typeUrl: string, names: string[]) => subscribe(server, h, typeUrl, names);

describe("TP3 resource errors", () => {
  // Steps: subscribe to c1 and c2 -> c1 gets an error (sent with c2 only) -> c2 changes (no error again) ->
  // c1 is set again (sent, no error).
  test("on CDS: sent once, never beside the resource, and the other clusters still listed", async () => {
    server.setResources([buildCluster({ name: "c1" }), buildCluster({ name: "c2" })]);
    const { s } = await subscribed(CDS_TYPE_URL, ["c1", "c2"]);

    server.setResourceError(CDS_TYPE_URL, "c1", denied);
    const withError = await s.next();
    expect(namesOf(withError)).toEqual(["c2"]);
    expect(errorNamesOf(withError)).toEqual(["c1"]);
    expect(withError.resourceErrors[0]?.errorDetail?.code).toBe(Code.PermissionDenied);
    expect(withError.resourceErrors[0]?.errorDetail?.message).toBe("not for this node");
    expect(server.getResource(CDS_TYPE_URL, "c1")).toBeUndefined();
    await s.ack(withError, ["c1", "c2"]);
    await s.none();

    server.setResource(buildCluster({ name: "c2", edsServiceName: "changed" }));
    const later = await s.next();
    expect(namesOf(later)).toEqual(["c2"]);
    expect(later.resourceErrors).toEqual([]);
    await s.ack(later, ["c1", "c2"]);

    server.setResource(buildCluster({ name: "c1" }));
    const cleared = await s.next();
    expect(namesOf(cleared)).toEqual(["c1", "c2"]);
    expect(cleared.resourceErrors).toEqual([]);
  });

  test("on RDS: the error alone, without resending the other route configs", async () => {
    server.setResources([
      buildRouteConfiguration({ name: "r1", cluster: "c" }),
      buildRouteConfiguration({ name: "r2", cluster: "c" }),
    ]);
    const { s } = await subscribed(RDS_TYPE_URL, ["r1", "r2"]);
    server.setResourceError(RDS_TYPE_URL, "r1", { code: Code.NotFound, message: "gone" });
    const response = await s.next();
    expect(namesOf(response)).toEqual([]);
    expect(errorNamesOf(response)).toEqual(["r1"]);
    expect(response.resourceErrors[0]?.errorDetail?.code).toBe(Code.NotFound);
  });

  test("a name in error from the start gets the error without waiting", async () => {
    server.setResourceError(CDS_TYPE_URL, "missing", { code: Code.NotFound, message: "no such cluster" });
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["missing"] });
    const response = await s.next();
    expect(response.resources).toEqual([]);
    expect(errorNamesOf(response)).toEqual(["missing"]);
  });

  test("is sent once per stream, and again to a stream that subscribes anew", async () => {
    server.setResourceError(RDS_TYPE_URL, "r", denied);
    const a = await subscribed(RDS_TYPE_URL, ["r"]);
    expect(errorNamesOf(a.first)).toEqual(["r"]);
    const b = await subscribed(RDS_TYPE_URL, ["r"]);
    expect(errorNamesOf(b.first)).toEqual(["r"]);

    // Unsubscribe, then subscribe again: the client forgot the error, so it gets it again.
    await a.s.ack(a.first, []);
    await a.s.none();
    await a.s.ack(a.first, ["r"]);
    const again = await a.s.next();
    expect(errorNamesOf(again)).toEqual(["r"]);
  });

  test("a new error replaces the old one and is sent", async () => {
    server.setResourceError(RDS_TYPE_URL, "r", denied);
    const { s } = await subscribed(RDS_TYPE_URL, ["r"]);
    server.setResourceError(RDS_TYPE_URL, "r", { code: Code.Unavailable, message: "backend down" });
    const response = await s.next();
    expect(response.resourceErrors.map((e) => e.errorDetail?.code)).toEqual([Code.Unavailable]);
  });

  test("goes only to names subscribed by name, not to a wildcard subscription", async () => {
    server.setResources([buildCluster({ name: "c1" })]);
    server.setResourceError(CDS_TYPE_URL, "c2", denied);
    const wildcard = await subscribed(CDS_TYPE_URL, []);
    expect(namesOf(wildcard.first)).toEqual(["c1"]);
    expect(wildcard.first.resourceErrors).toEqual([]);

    const named = await subscribed(CDS_TYPE_URL, ["*", "c2"]);
    expect(namesOf(named.first)).toEqual(["c1"]);
    expect(errorNamesOf(named.first)).toEqual(["c2"]);
  });

  test("clearResourceError and removeResource take the error away; an OK status is refused", async () => {
    server.setResourceError(CDS_TYPE_URL, "c", denied);
    expect(server.clearResourceError(CDS_TYPE_URL, "c")).toBe(true);
    expect(server.clearResourceError(CDS_TYPE_URL, "c")).toBe(false);
    server.setResourceError(CDS_TYPE_URL, "c", denied);
    expect(server.removeResource(CDS_TYPE_URL, "c")).toBe(true);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c"] });
    await s.none();
    expect(() => server.setResourceError(CDS_TYPE_URL, "c", { code: 0 })).toThrow(RangeError);
    expect(() => server.setResourceError(CDS_TYPE_URL, "c", { code: 99 })).toThrow(RangeError);
  });
});
