// A wildcard subscription with dynamic parameters (a `*` resource locator, docs/decisions.md#wildcards-with-parameters),
// over real HTTP/2 in both protocols: every name it covers gets the variant its parameters match, as a subscription
// of that name with those parameters would; a stream may hold several, one per parameter map, as it may hold a name.
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { describe, expect, test } from "vitest";
import { CDS_TYPE_URL, createManagementServer, type ManagementServer } from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";
import { shareServer } from "./util.js";
import { type Protocol, type Seen, variantClient } from "./variant-client.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const cluster = (marker: string, name: string) =>
  create(ClusterSchema, { name, edsClusterConfig: { serviceName: marker } });
const sorted = (labels: string[]) => [...labels].sort();
const view = (seen: Seen) => ({ resources: sorted(seen.resources), removed: sorted(seen.removed) });
const PROD_WILDCARD = { name: "*", params: { env: "prod" } };

describe.each(["sotw", "delta"] as Protocol[])("a wildcard with parameters over %s", (protocol) => {
  const sotw = protocol === "sotw";

  test("covers every name with the variant its parameters match; a change to another variant does not reach it", async () => {
    // Steps: c in variants env=prod and env=test, d unconstrained; a wildcard with {env:prod} gets c{env=prod} and
    // d, a wildcard without parameters gets d only (no variant of c matches the empty map); the env=test variant
    // changes: neither hears of it; a new name e reaches both; the env=prod variant goes: the prod wildcard loses
    // c (SotW: left out of the full state; delta: removed by its constraints).
    server.setResources([
      { resource: cluster("p1", "c"), constraints: "env=prod" },
      { resource: cluster("t1", "c"), constraints: "env=test" },
      cluster("d1", "d"),
    ]);
    const prod = variantClient(h, protocol, "prod");
    const plain = variantClient(h, protocol, "plain");
    await prod.subscribe(CDS_TYPE_URL, [PROD_WILDCARD]);
    const first = await prod.next();
    expect(view(first)).toEqual({ resources: ["c{env=prod}:p1", "d:d1"], removed: [] });
    await prod.ack(first);
    const info = server.streams().find((stream) => stream.node?.id === "prod")?.types[0];
    expect(info?.wildcard).toBe(true);
    expect(info?.wildcardParameters).toEqual([{ env: "prod" }]);
    expect(info?.resourceLocators).toEqual([]);
    expect(sorted([...(info?.sentVersions.keys() ?? [])])).toEqual(["c{env=prod}", "d{env=prod}"]);
    await plain.subscribe(CDS_TYPE_URL, [{ name: "*" }]);
    const plainFirst = await plain.next();
    expect(view(plainFirst).resources).toEqual(["d:d1"]);
    await plain.ack(plainFirst);

    server.setResource(cluster("t2", "c"), { constraints: "env=test" });
    await prod.none();
    await plain.none();

    server.setResource(cluster("e1", "e"));
    for (const [client, expected] of [
      [prod, sotw ? ["c{env=prod}:p1", "d:d1", "e:e1"] : ["e:e1"]],
      [plain, sotw ? ["d:d1", "e:e1"] : ["e:e1"]],
    ] as const) {
      const added = await client.next();
      expect(view(added).resources).toEqual(expected);
      await client.ack(added);
    }

    server.removeResource(CDS_TYPE_URL, "c", "env=prod");
    const removed = await prod.next();
    expect(view(removed)).toEqual(
      sotw ? { resources: ["d:d1", "e:e1"], removed: [] } : { resources: [], removed: ["c{env=prod}"] },
    );
    await plain.none();
  });

  test("a name the stream also subscribes to by name keeps its own subscription beside the wildcard's", async () => {
    server.setResources([
      { resource: cluster("p1", "c"), constraints: "env=prod" },
      { resource: cluster("t1", "c"), constraints: "env=test" },
    ]);
    const client = variantClient(h, protocol);
    await client.subscribe(CDS_TYPE_URL, [PROD_WILDCARD, { name: "c", params: { env: "test" } }]);
    const first = await client.next();
    expect(view(first).resources).toEqual(["c{env=prod}:p1", "c{env=test}:t1"]);
  });
});

describe("several wildcards on one stream", () => {
  test("SotW: `*` and `*{env:prod}` in one request are two wildcards, each name once per map", async () => {
    server.setResources([
      { resource: cluster("p1", "c"), constraints: "env=prod" },
      { resource: cluster("t1", "c"), constraints: "env=test" },
      cluster("d1", "d"),
    ]);
    const client = variantClient(h, "sotw");
    await client.subscribe(CDS_TYPE_URL, [{ name: "*" }, PROD_WILDCARD]);
    const first = await client.next();
    // d twice (once per map, the same resource: listed once), c for the prod map only.
    expect(view(first).resources).toEqual(["c{env=prod}:p1", "d:d1"]);
    const info = server.streams().find((stream) => stream.node?.id === "n")?.types[0];
    expect(info?.wildcardParameters).toEqual([{}, { env: "prod" }]);
    expect(sorted([...(info?.sentVersions.keys() ?? [])])).toEqual(["c{env=prod}", "d", "d{env=prod}"]);
  });

  test("delta: a `*` locator unsubscribed leaves the other wildcard; what it covered the client forgets itself", async () => {
    server.setResources([
      { resource: cluster("p1", "c"), constraints: "env=prod" },
      { resource: cluster("t1", "c"), constraints: "env=test" },
    ]);
    const client = variantClient(h, "delta");
    await client.subscribe(CDS_TYPE_URL, [PROD_WILDCARD, { name: "*", params: { env: "test" } }]);
    const first = await client.next();
    expect(view(first).resources).toEqual(["c{env=prod}:p1", "c{env=test}:t1"]);
    await client.ack(first);
    await client.subscribe(CDS_TYPE_URL, [], [PROD_WILDCARD]);
    await client.none();
    server.setResource(cluster("p2", "c"), { constraints: "env=prod" });
    await client.none();
    server.setResource(cluster("t2", "c"), { constraints: "env=test" });
    expect(view(await client.next())).toEqual({ resources: ["c{env=test}:t2"], removed: [] });
  });

  test("delta: wildcards count against maxResourceNamesPerType, one per parameter map", async () => {
    const limited = await createManagementServer({ maxResourceNamesPerType: 3 });
    try {
      const d = createHarness(limited.url).delta();
      await d.send({
        node: { id: "n" },
        typeUrl: CDS_TYPE_URL,
        resourceNamesSubscribe: ["*", "a"],
        resourceLocatorsSubscribe: [PROD_WILDCARD_LOCATOR],
      });
      await d.send({
        typeUrl: CDS_TYPE_URL,
        resourceLocatorsSubscribe: [{ name: "*", dynamicParameters: { env: "test" } }],
      });
      const error = await d.ended();
      expect(error?.code).toBe(Code.ResourceExhausted);
      expect(error?.rawMessage).toContain("maxResourceNamesPerType (3)");
    } finally {
      await limited.close();
    }
  });
});

const PROD_WILDCARD_LOCATOR = { name: "*", dynamicParameters: { env: "prod" } };
