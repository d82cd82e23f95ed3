// TP2 variants served over real HTTP/2, in both protocols: one name published in several variants, each with its
// constraints; each subscription (a locator with dynamic parameters, or a name) gets the variant its parameters
// match, wrapped in `Resource` with `resource_name { name, dynamic_parameter_constraints }`.
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { and, type Expr, exists, not, toProto, value } from "@xdskit/constraint-matcher";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { describe, expect, test } from "vitest";
import {
  buildClusterLoadAssignment,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  type ManagementServer,
  OverlappingVariantsError,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";
import { newestStream, shareServer } from "./util.js";
import { type Protocol, type Seen, variantClient } from "./variant-client.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const cluster = (marker: string, name = "c") =>
  create(ClusterSchema, { name, edsClusterConfig: { serviceName: marker } });
const endpoints = (port: number) =>
  buildClusterLoadAssignment({ clusterName: "e", localities: [{ endpoints: [`127.0.0.1:${port}`] }] });
const PROD = { name: "c", params: { env: "prod" } };
const TEST = { name: "c", params: { env: "test" } };
const sorted = (labels: string[]) => [...labels].sort();
/** Constraints as the wire message. */
const wire = (e: Expr) => {
  const message = toProto(e);
  if (!message) throw new Error("no constraints");
  return message;
};

/** A response's labels, resources sorted (a response lists one variant per subscription, in no promised order). */
const view = (seen: Seen) => ({
  resources: sorted(seen.resources),
  removed: sorted(seen.removed),
  errors: seen.errors,
});

describe.each(["sotw", "delta"] as Protocol[])("variants over %s", (protocol) => {
  const sotw = protocol === "sotw";

  test("two subscriptions of one name get two variants; one variant changes, then goes, while the other stays", async () => {
    // Steps: variants env=prod and env=test of cluster c (given as text and as an expression); one stream
    // subscribes with {env:prod} and {env:test} -> both variants, with their constraints; the prod variant changes
    // (given as the wire message) -> SotW lists both (CDS is full-state), delta only prod; the test variant is
    // removed -> SotW lists prod alone, delta removes c{env=test} by its constraints.
    server.setResources([
      { resource: cluster("p1"), constraints: "env=prod" },
      { resource: cluster("t1"), constraints: value("env", "test") },
    ]);
    const client = variantClient(h, protocol);
    await client.subscribe(CDS_TYPE_URL, [PROD, TEST]);
    const first = await client.next();
    expect(view(first)).toEqual({ resources: ["c{env=prod}:p1", "c{env=test}:t1"], removed: [], errors: [] });
    await client.ack(first);
    const info = newestStream(server).types[0];
    expect(info?.resourceLocators).toEqual([
      { name: "c", dynamicParameters: { env: "prod" } },
      { name: "c", dynamicParameters: { env: "test" } },
    ]);
    expect([...(info?.sentVersions.keys() ?? [])]).toEqual(["c{env=prod}", "c{env=test}"]);

    server.setResource(cluster("p2"), { constraints: wire(value("env", "prod")) });
    const changed = await client.next();
    expect(view(changed).resources).toEqual(sotw ? ["c{env=prod}:p2", "c{env=test}:t1"] : ["c{env=prod}:p2"]);
    await client.ack(changed);

    expect(server.removeResource(CDS_TYPE_URL, "c", "env=test")).toBe(true);
    const removed = await client.next();
    expect(view(removed)).toEqual(
      sotw
        ? { resources: ["c{env=prod}:p2"], removed: [], errors: [] }
        : { resources: [], removed: ["c{env=test}"], errors: [] },
    );
    expect(server.resourceVariants(CDS_TYPE_URL, "c")).toEqual(["env=prod"]);
    await client.ack(removed);
    await client.none();
  });

  test("a change to one variant reaches only the streams whose subscriptions hold it", async () => {
    server.setResources([
      { resource: cluster("p1"), constraints: "env=prod" },
      { resource: cluster("t1"), constraints: "env=test" },
    ]);
    const a = variantClient(h, protocol);
    const b = variantClient(h, protocol);
    await a.subscribe(CDS_TYPE_URL, [PROD]);
    await b.subscribe(CDS_TYPE_URL, [TEST]);
    await a.ack(await a.next());
    await b.ack(await b.next());

    server.setResource(cluster("t2"), { constraints: "env=test" });
    expect(view(await b.next()).resources).toEqual(["c{env=test}:t2"]);
    await a.none();
  });

  test("a name without parameters gets the variant an empty map matches; a locator matching none gets nothing", async () => {
    // Steps: variants !exists(env) and env=prod; subscriptions c (by name), c{env=prod}, c{env=test} -> the first two
    // get their variants, env=test none (delta: told c does not exist); an env=test variant appears -> it goes to
    // the env=test subscription.
    server.setResources([
      { resource: cluster("default"), constraints: not(exists("env")) },
      { resource: cluster("p1"), constraints: "env=prod" },
    ]);
    const client = variantClient(h, protocol);
    await client.subscribe(CDS_TYPE_URL, [{ name: "c" }, PROD, TEST]);
    const first = await client.next();
    expect(view(first)).toEqual({
      resources: ["c{!exists(env)}:default", "c{env=prod}:p1"],
      removed: sotw ? [] : ["c"],
      errors: [],
    });
    await client.ack(first);

    server.setResource(cluster("t1"), { constraints: "env=test" });
    const added = await client.next();
    expect(view(added).resources).toEqual(
      sotw ? ["c{!exists(env)}:default", "c{env=prod}:p1", "c{env=test}:t1"] : ["c{env=test}:t1"],
    );
  });

  test("a variant replaced by more specific ones: the subscription moves in one response, the old variant removed beside it", async () => {
    server.setResource(cluster("p"), { constraints: "env=prod" });
    const client = variantClient(h, protocol);
    await client.subscribe(CDS_TYPE_URL, [{ name: "c", params: { env: "prod", v: "1" } }]);
    await client.ack(await client.next());

    // One synchronous run: one push.
    server.removeResource(CDS_TYPE_URL, "c", "env=prod");
    server.setResources([
      { resource: cluster("p-v1"), constraints: and([value("env", "prod"), value("v", "1")]) },
      { resource: cluster("p-v2"), constraints: "env=prod && v=2" },
    ]);
    expect(view(await client.next())).toEqual({
      resources: ["c{env=prod && v=1}:p-v1"],
      removed: sotw ? [] : ["c{env=prod}"],
      errors: [],
    });
    await client.none();
  });

  test("overlapping variants published with allowOverlap: the most specific wins, and the other variants held go along", async () => {
    // Steps: on EDS (not full-state), an unconstrained assignment (port 80) and an env=prod one (81) allowed to
    // overlap it; subscriptions e, e{env=prod}, e{env=test} -> e and e{env=test} get the unconstrained one, e{env=prod}
    // its own; the env=prod variant changes -> the response carries the unconstrained one too, so a client choosing
    // among what it receives still gives e and e{env=test} the unconstrained one.
    server.setResource(endpoints(80));
    server.setResource(endpoints(81), { constraints: "env=prod", allowOverlap: true });
    const client = variantClient(h, protocol);
    await client.subscribe(EDS_TYPE_URL, [
      { name: "e" },
      { name: "e", params: { env: "prod" } },
      { name: "e", params: { env: "test" } },
    ]);
    const first = await client.next();
    expect(view(first).resources).toEqual(["e:80", "e{env=prod}:81"]);
    await client.ack(first);

    server.setResource(endpoints(82), { constraints: "env=prod", allowOverlap: true });
    expect(view(await client.next()).resources).toEqual(["e:80", "e{env=prod}:82"]);
  });

  test("a TP3 error on one variant goes with its constraints to the subscriptions of that variant only", async () => {
    // Steps: variants env=prod and env=test; stream A subscribes to both, stream B to env=prod; an error for the
    // env=test variant -> A gets it (SotW: beside the prod variant, CDS being full-state), B nothing; the variant is
    // set again -> A gets it, the error cleared.
    server.setResources([
      { resource: cluster("p1"), constraints: "env=prod" },
      { resource: cluster("t1"), constraints: "env=test" },
    ]);
    const a = variantClient(h, protocol);
    const b = variantClient(h, protocol);
    await a.subscribe(CDS_TYPE_URL, [PROD, TEST]);
    await b.subscribe(CDS_TYPE_URL, [PROD]);
    await a.ack(await a.next());
    await b.ack(await b.next());

    server.setResourceError(CDS_TYPE_URL, "c", { code: Code.PermissionDenied }, { constraints: "env=test" });
    const withError = await a.next();
    expect(view(withError)).toEqual({
      resources: sotw ? ["c{env=prod}:p1"] : [],
      removed: [],
      errors: [`c{env=test}:${Code.PermissionDenied}`],
    });
    await a.ack(withError);
    await b.none();

    server.setResource(cluster("t2"), { constraints: "env=test" });
    const cleared = await a.next();
    expect(view(cleared)).toEqual({
      resources: sotw ? ["c{env=prod}:p1", "c{env=test}:t2"] : ["c{env=test}:t2"],
      removed: [],
      errors: [],
    });
    await b.none();
  });

  test("a wildcard subscription gets, for each name, the variant an empty map matches", async () => {
    server.setResources([
      { resource: cluster("default"), constraints: "!exists(env)" },
      { resource: cluster("p1"), constraints: "env=prod" },
      { resource: cluster("plain", "other") },
    ]);
    const client = variantClient(h, protocol);
    await client.subscribe(CDS_TYPE_URL, []);
    expect(view(await client.next()).resources).toEqual(["c{!exists(env)}:default", "other:plain"]);
  });
});

describe("publishing variants", () => {
  test("an overlapping variant is refused, naming both and a parameter map they share; nothing changes", () => {
    server.setResource(cluster("p"), { constraints: "env=prod" });
    const version = server.typeVersion(CDS_TYPE_URL);
    let error: unknown;
    try {
      server.setResources([
        { resource: cluster("other", "d") },
        { resource: cluster("e"), constraints: "exists(env) && !env=test" },
      ]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OverlappingVariantsError);
    const overlap = error as OverlappingVariantsError;
    expect(overlap.constraints).toEqual(["!env=test && exists(env)", "env=prod"]);
    expect(overlap.witness).toEqual({ env: "prod" });
    expect(overlap.message).toContain("allowOverlap");
    expect(server.getResource(CDS_TYPE_URL, "d")).toBeUndefined();
    expect(server.typeVersion(CDS_TYPE_URL)).toBe(version);
    // The unconstrained variant overlaps every other one.
    expect(() => server.setResource(cluster("plain"))).toThrow(OverlappingVariantsError);
    expect(() => server.setResourceError(CDS_TYPE_URL, "c", { code: 5 })).toThrow(OverlappingVariantsError);
    // Disjoint variants, and a new version of an existing one, pass.
    server.setResource(cluster("t"), { constraints: "env=test" });
    server.setResource(cluster("p2"), { constraints: "env=prod" });
    expect(server.resourceVariants(CDS_TYPE_URL, "c")).toEqual(["env=test", "env=prod"]);
  });

  test("constraints that cannot go on the wire are refused with the resource named", () => {
    expect(() => server.setResource(cluster("x"), { constraints: "shard in [1..3]" })).toThrow(
      /resource c of type .*Cluster: bad constraints: .*ranges exist only in the TP2 draft/,
    );
    expect(() => server.setResource(cluster("x"), { constraints: "env=" })).toThrow(/bad constraints: column/);
    expect(server.resourceNames(CDS_TYPE_URL)).toEqual([]);
  });

  test("one variant whatever the spelling of its constraints: text, expression or wire message", () => {
    server.setResource(cluster("1"), { constraints: "b=2 && a=1" });
    server.setResource(cluster("2"), { constraints: and([value("a", "1"), value("b", "2")]) });
    server.setResource(cluster("3"), { constraints: wire(and([value("b", "2"), value("a", "1")])) });
    expect(server.resourceVariants(CDS_TYPE_URL, "c")).toEqual(["a=1 && b=2"]);
    const message = server.getResource(CDS_TYPE_URL, "c", "a=1 && b=2") as
      | { edsClusterConfig?: { serviceName: string } }
      | undefined;
    expect(message?.edsClusterConfig?.serviceName).toBe("3");
    expect(server.getResource(CDS_TYPE_URL, "c")).toBeUndefined();
  });

  test("a server created with allowOverlappingVariants accepts overlaps and serves the most specific match", async () => {
    const permissive = await createManagementServer({ allowOverlappingVariants: true });
    const ph = createHarness(permissive.url);
    try {
      permissive.setResources([
        { resource: cluster("any"), constraints: "exists(env)" },
        { resource: cluster("p"), constraints: "env=prod" },
      ]);
      const client = variantClient(ph, "delta");
      await client.subscribe(CDS_TYPE_URL, [PROD, TEST]);
      expect(view(await client.next()).resources).toEqual(["c{env=prod}:p", "c{exists(env)}:any"]);
    } finally {
      ph.cleanup();
      await permissive.close();
    }
  });
});
