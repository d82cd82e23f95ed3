// Property: for random variant sets (exact values, exists, not, overlapping ones included) and random parameter
// maps, the variant @xdskit/control-plane sends for a subscription, the one @xdskit/xds-client gives the watcher
// with those parameters, and @xdskit/constraint-matcher's selection are the same, in SotW and in delta.
import {
  and,
  canonicalText,
  createVariantIndex,
  type Expr,
  exists,
  fromProto,
  not,
  TRUE,
  value,
} from "@xdskit/constraint-matcher";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { clusterResourceType, StatusCode, type XdsClient } from "@xdskit/xds-client";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { sentVariants } from "./sent-variants.js";
import { type ApiType, clientFor, clusterRecorder } from "./support.js";

const KEYS = ["a", "b", "c"];
const VALUES = ["1", "2"];
const key = fc.constantFrom(...KEYS);
const val = fc.constantFrom(...VALUES);

/** Mostly exact values (TRUE when no key), plus exists / not shapes. */
const constraints: fc.Arbitrary<Expr> = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(key, val, { maxKeys: 3 }).map(exact) },
  { weight: 1, arbitrary: key.map((k) => exists(k)) },
  { weight: 1, arbitrary: key.map((k) => not(exists(k))) },
  { weight: 1, arbitrary: fc.tuple(key, val).map(([k, v]) => not(value(k, v))) },
  {
    weight: 1,
    arbitrary: fc.tuple(key, val, key).map(([k, v, absent]) => and([value(k, v), not(exists(absent))])),
  },
);
const variantSet = fc.uniqueArray(constraints, { minLength: 1, maxLength: 6, selector: (c) => canonicalText(c) });
const params = fc.uniqueArray(fc.dictionary(key, val, { maxKeys: 3 }), {
  minLength: 1,
  maxLength: 3,
  selector: (p) => JSON.stringify(Object.entries(p).sort()),
});

function exact(map: Record<string, string>): Expr {
  const terms = Object.entries(map).map(([k, v]) => value(k, v));
  return terms.length === 0 ? TRUE : and(terms);
}

const RUNS = Number(process.env.XDSKIT_E2E_RUNS ?? 30);

describe.each(["GRPC", "DELTA_GRPC"] as ApiType[])("variant choice over %s", (apiType) => {
  let server: ManagementServer;
  let client: XdsClient;
  beforeAll(async () => {
    server = await createManagementServer({ allowOverlappingVariants: true, historyLimit: 100 });
    client = clientFor(server, apiType);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  test("the control plane, the client and the matcher pick the same variant for every subscription", async () => {
    // Each run, on a fresh name: an unconstrained seed that every watch gets; then, in one push, the seed gives way
    // to the random variants; each watch then gets its variant, or (none matching) hears the name is gone.
    let run = 0;
    await fc.assert(
      fc.asyncProperty(variantSet, params, async (variants, maps) => {
        const name = `c${++run}`;
        server.setResource(buildCluster({ name, edsServiceName: "seed" }));
        const watches = maps.map((p) => {
          const watcher = clusterRecorder();
          const cancel = client.watch(clusterResourceType, name, watcher, { dynamicParameters: p });
          return { p, watcher, cancel };
        });
        try {
          for (const w of watches) expect(await w.watcher.take(1)).toEqual(["resource:seed"]);

          const mark = server.hooks.mark();
          server.removeResource(CDS_TYPE_URL, name);
          server.setResources(
            variants.map((c, i) => ({ resource: buildCluster({ name, edsServiceName: `v${i}` }), constraints: c })),
          );

          const index = createVariantIndex<string>();
          variants.forEach((c, i) => {
            index.add(c, `v${i}`);
          });
          const expected = watches.map((w) => index.select(w.p)?.variant.value);
          const got = await Promise.all(watches.map((w) => w.watcher.take(1)));
          expect(got).toEqual(expected.map((v) => [v ? `resource:${v}` : `ambient:${StatusCode.NOT_FOUND}`]));
          // What the control plane sent for the name: the selected variants, each with its constraints.
          const chosen = new Map<string, string>();
          variants.forEach((c, i) => {
            if (expected.includes(`v${i}`)) chosen.set(`v${i}`, canonicalText(c));
          });
          const sent = sentVariants(server, mark, name);
          expect(new Map([...sent].map(([marker, c]) => [marker, c && canonicalText(fromProto(c))]))).toEqual(
            new Map([...chosen].map(([marker, text]) => [marker, text === "true" ? undefined : text])),
          );
        } finally {
          for (const w of watches) w.cancel();
          server.removeResource(CDS_TYPE_URL, name);
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
