// A change to one variant of a name reaches the streams it can concern, and no other: a stream holding another
// variant is neither sent anything nor planned for (the server does not even compare what it holds), while a stream
// that a new, more specific variant now matches moves to it, and the holders of a removed variant fall back to the
// next match. Over real HTTP/2, SotW and delta.
import { create } from "@bufbuild/protobuf";
import { canonicalText, fromText } from "@xdskit/constraint-matcher";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { CDS_TYPE_URL, type ManagementServer } from "../src/index.js";
import { DeltaStream } from "../src/streams/delta-stream.js";
import { SotwStream } from "../src/streams/sotw-stream.js";
import type { Harness } from "./ads-client.js";
import { newestStream, shareServer } from "./util.js";
import { type Locator, type Protocol, type Seen, type VariantClient, variantClient } from "./variant-client.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

// Every plan a stream works out, by stream id: a stream that is not woken plans nothing.
type Planning = { planResponse(...args: unknown[]): unknown };
const spies = [SotwStream, DeltaStream].map((stream) =>
  vi.spyOn(stream.prototype as unknown as Planning, "planResponse"),
);
beforeAll(() => {
  for (const spy of spies) spy.mockClear();
});
afterAll(() => {
  for (const spy of spies) spy.mockRestore();
});
const plansFor = (streamId: number): number =>
  spies.reduce(
    (sum, spy) => sum + spy.mock.contexts.filter((stream) => (stream as { id: number }).id === streamId).length,
    0,
  );

const cluster = (marker: string) => create(ClusterSchema, { name: "c", edsClusterConfig: { serviceName: marker } });
/** Publishes a variant of c; the variants overlap (the unconstrained one matches everything) by design. */
const put = (marker: string, constraints?: string) =>
  server.setResource(cluster(marker), { ...(constraints ? { constraints } : {}), allowOverlap: true });
const label = (constraints: string, marker: string) => `c{${canonicalText(fromText(constraints))}}:${marker}`;
const removedLabel = (constraints: string) => `c{${canonicalText(fromText(constraints))}}`;

/** Subscribes a new stream with one locator and settles it on its first response (ACKed, the ACK taken). */
async function open(protocol: Protocol, locator: Locator, nodeId: string) {
  const client = variantClient(h, protocol, nodeId);
  await client.subscribe(CDS_TYPE_URL, [locator]);
  const first = await client.next();
  const id = newestStream(server).id;
  await settle(client, first);
  return { client, first, id };
}

async function settle(client: VariantClient, seen: Seen): Promise<void> {
  const before = server.hooks.mark();
  await client.ack(seen);
  await server.hooks.waitForRequest((r) => r.responseNonce === seen.nonce && r.disposition !== "subscribe", {
    after: before,
  });
}

/** Responses the server made for a stream after a mark. */
const responsesTo = (streamId: number, after: number) =>
  server.hooks.responses().filter((e) => e.streamId === streamId && e.seq > after);

describe.each(["sotw", "delta"] as Protocol[])("a variant change over %s", (protocol) => {
  const sotw = protocol === "sotw";

  test("wakes only the streams whose parameters its constraints match, and they move as they should", async () => {
    // Steps: c has an unconstrained variant and shard=a, shard=b; stream A subscribes {shard:a, zone:z}, stream B
    // {shard:b}. Each change below is made once both streams are settled; the stream it concerns gets its response
    // (every stream's flush runs in the microtasks right after the change, before any response reaches a client),
    // and the other stream planned nothing and was sent nothing.
    server.setResources([
      { resource: cluster("all1"), allowOverlap: true },
      { resource: cluster("a1"), constraints: "shard=a", allowOverlap: true },
      { resource: cluster("b1"), constraints: "shard=b", allowOverlap: true },
    ]);
    const a = await open(protocol, { name: "c", params: { shard: "a", zone: "z" } }, "na");
    const b = await open(protocol, { name: "c", params: { shard: "b" } }, "nb");
    expect(a.first.resources).toEqual([label("shard=a", "a1")]);
    expect(b.first.resources).toEqual([label("shard=b", "b1")]);

    /** Makes a change, reads the moving stream's response, and checks the still one was not woken. */
    const change = async (
      make: () => void,
      moving: { client: VariantClient; id: number },
      still: { id: number },
    ): Promise<Seen> => {
      const mark = server.hooks.mark();
      const plansBefore = plansFor(still.id);
      make();
      const seen = await moving.client.next();
      expect(plansFor(still.id)).toBe(plansBefore);
      expect(responsesTo(still.id, mark)).toEqual([]);
      expect(responsesTo(moving.id, mark)).toHaveLength(1);
      await settle(moving.client, seen);
      return seen;
    };

    // A's variant changes: A gets it, B is left alone.
    const updated = await change(() => put("a2", "shard=a"), a, b);
    expect(updated.resources).toEqual([label("shard=a", "a2")]);
    expect(updated.removed).toEqual([]);

    // A new variant more specific than A's, which A's parameters match: A moves to it (delta: and drops shard=a).
    const az = "shard=a && zone=z";
    const narrowed = await change(() => put("az1", az), a, b);
    expect(narrowed.resources).toEqual([label(az, "az1")]);
    expect(narrowed.removed).toEqual(sotw ? [] : [removedLabel("shard=a")]);

    // That variant goes: A falls back to shard=a.
    const widened = await change(() => server.removeResource(CDS_TYPE_URL, "c", az), a, b);
    expect(widened.resources).toEqual([label("shard=a", "a2")]);
    expect(widened.removed).toEqual(sotw ? [] : [removedLabel(az)]);

    // B's variant goes: B falls back to the unconstrained one; A is left alone.
    const fallen = await change(() => server.removeResource(CDS_TYPE_URL, "c", "shard=b"), b, a);
    expect(fallen.resources).toEqual(["c:all1"]);
    expect(fallen.removed).toEqual(sotw ? [] : [removedLabel("shard=b")]);

    // The unconstrained variant changes: it concerns both. B, which holds it, gets it; A is planned for (its last
    // flush predates B's change, which its comparison now covers) and finds nothing due: nothing is resent.
    const mark = server.hooks.mark();
    const plansOfA = plansFor(a.id);
    put("all2");
    const both = await b.client.next();
    expect(both.resources).toEqual(["c:all2"]);
    expect(plansFor(a.id)).toBeGreaterThan(plansOfA);
    expect(responsesTo(a.id, mark)).toEqual([]);
    await settle(b.client, both);

    // And A's variant changing again still reaches A alone, with exactly that variant.
    const again = await change(() => put("a3", "shard=a"), a, b);
    expect(again.resources).toEqual([label("shard=a", "a3")]);
    expect(again.removed).toEqual([]);
  });
});
