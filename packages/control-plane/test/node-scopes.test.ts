import { afterEach, describe, expect, test } from "vitest";
import { buildCluster, CDS_TYPE_URL, type ManagementServer, type NodeScope } from "../src/index.js";
import type { Harness } from "./ads-client.js";
import { namesOf, shareServer, subscribe } from "./util.js";

let server: ManagementServer;
let h: Harness;
const scopes: NodeScope[] = [];
shareServer((s, harness) => {
  server = s;
  h = harness;
});
afterEach(() => {
  for (const scope of scopes.splice(0)) scope.dispose();
});

function forNode(...args: Parameters<ManagementServer["forNode"]>): NodeScope {
  const scope = server.forNode(...args);
  scopes.push(scope);
  return scope;
}

const wildcardCds = (node?: { id: string; cluster?: string }) => subscribe(server, h, CDS_TYPE_URL, [], node);

describe("per-node resource sets", () => {
  test("a node id gets its own set; other nodes and streams without a node get the default set", async () => {
    server.setSnapshot([buildCluster({ name: "default" })]);
    forNode("canary").setSnapshot([buildCluster({ name: "canary-only" })]);
    expect(namesOf((await wildcardCds({ id: "canary" })).first)).toEqual(["canary-only"]);
    expect(namesOf((await wildcardCds({ id: "stable" })).first)).toEqual(["default"]);
    expect(namesOf((await wildcardCds()).first)).toEqual(["default"]);
  });

  test("a predicate selects on any node field; the first matching scope wins", async () => {
    forNode((node) => node.cluster === "blue").setResource(buildCluster({ name: "blue" }));
    forNode({ nodeId: "x" }).setResource(buildCluster({ name: "x" }));
    expect(namesOf((await wildcardCds({ id: "x", cluster: "blue" })).first)).toEqual(["blue"]);
    expect(namesOf((await wildcardCds({ id: "x", cluster: "green" })).first)).toEqual(["x"]);
  });

  test("updates to a scope reach only its streams", async () => {
    const scope = forNode("a");
    scope.setResource(buildCluster({ name: "a1" }));
    server.setResource(buildCluster({ name: "d1" }));
    const a = await wildcardCds({ id: "a" });
    const other = await wildcardCds({ id: "b" });
    scope.setResource(buildCluster({ name: "a2" }));
    expect(namesOf(await a.s.next())).toEqual(["a1", "a2"]);
    await other.s.none();
    server.setResource(buildCluster({ name: "d2" }));
    expect(namesOf(await other.s.next())).toEqual(["d1", "d2"]);
    await a.s.none();
  });

  test("a scope added or disposed while streams are open moves them between sets", async () => {
    server.setResource(buildCluster({ name: "d1" }));
    const { s } = await wildcardCds({ id: "late" });
    const scope = forNode("late");
    scope.setResource(buildCluster({ name: "late-1" }));
    const moved = await s.next();
    expect(namesOf(moved)).toEqual(["late-1"]);
    await s.ack(moved, []);
    scope.dispose();
    expect(namesOf(await s.next())).toEqual(["d1"]);
  });

  test("a throwing selector counts as no match", async () => {
    server.setResource(buildCluster({ name: "d1" }));
    forNode(() => {
      throw new Error("selector bug");
    });
    expect(namesOf((await wildcardCds({ id: "n" })).first)).toEqual(["d1"]);
  });

  test("an empty node id is refused", () => {
    expect(() => server.forNode("")).toThrow(TypeError);
  });
});
