// @xdskit/connect-xds's issue 21 hot paths beside @grpc/grpc-js-xds / grpc-js, in one run:
// - ring_hash lookup at 10,000 endpoints (the ring's binary search for a request hash),
// - ring rebuild at 10,000 endpoints, minimum ring size 1,024 (gRPC's cap of 4,096 applies to both),
// - weighted_round_robin pick at 1,000 READY endpoints with distinct weights (the whole picker),
// - a unary call through a route whose retry policy never fires, against the same route without one (real HTTP/2).
// `--quick` shortens the samples.

import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  createLbPolicyRegistry,
  createWrrPolicyFactory,
  createXdsTransport,
  type LbEndpoint,
  type LbHelper,
  type Picker,
  type PickInfo,
  type Subchannel,
} from "@xdskit/connect-xds";
import { buildHashRing, resolveRingHashConfig } from "@xdskit/connect-xds/internal";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
} from "@xdskit/control-plane";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { createXdsClient } from "@xdskit/xds-client";
import { consume, median, opsPerSecond } from "./lib/measure.js";
import { peerInternals, peerRequire } from "./lib/peer-internals.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const measure = { sampleMs: quick ? 50 : 200, samples: quick ? 3 : 5 };
const ENDPOINTS = 10_000;
const addresses = Array.from({ length: ENDPOINTS }, (_, i) => ({
  host: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
  port: 8080,
}));

/** A fixed set of request hashes (as both implementations take them). */
let seed = 12345;
const next32 = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed;
};
const HASHES = Array.from({ length: 4096 }, () => [next32(), next32()] as const);
const BIG_HASHES = HASHES.map(([hi, lo]) => (BigInt(hi) << 32n) | BigInt(lo));

async function ringRows(): Promise<string[][]> {
  const config = resolveRingHashConfig({ minimumRingSize: 1024 });
  if (!config.ok) throw new Error(config.error);
  const endpoints = addresses.map((a) => ({ key: `${a.host}:${a.port}`, weight: 1 }));
  const ours = buildHashRing(endpoints, config.config);

  // grpc-js-xds: its RingHashLoadBalancer.constructRing on a stand-in `this`, and its RingHashPicker's search.
  const peer = peerInternals("@grpc/grpc-js-xds", "./build/src/load-balancer-ring-hash.js", [
    "RingHashLoadBalancer",
    "RingHashPicker",
    "RingHashLoadBalancingConfig",
  ]) as {
    RingHashLoadBalancer: { prototype: { constructRing(list: unknown[], config: unknown, cap: number): void } };
    RingHashPicker: new (ring: unknown[]) => { findIndexForHash(hash: bigint): number };
    RingHashLoadBalancingConfig: new (min: number, max: number) => unknown;
  };
  const xxhash = peerRequire(
    peerRequire.resolve("./build/src/xxhash.js", {
      paths: [peerRequire.resolve("@grpc/grpc-js-xds/package.json").replace(/package\.json$/, "")],
    }),
  ) as { loadXxhashApi(): Promise<unknown> };
  await xxhash.loadXxhashApi();
  const endpointList = addresses.map((a) => ({ addresses: [a] }));
  const peerThis = {
    ring: [] as unknown[],
    leafWeightMap: new Map(endpointList.map((e) => [e, 1])),
    leafMap: new Map(endpointList.map((e) => [e, {}])),
  };
  const peerConfig = new peer.RingHashLoadBalancingConfig(1024, 8_388_608);
  const rebuildPeer = () =>
    peer.RingHashLoadBalancer.prototype.constructRing.call(peerThis, endpointList, peerConfig, 4096);
  rebuildPeer();
  const peerPicker = new peer.RingHashPicker(peerThis.ring);
  if (peerThis.ring.length !== ours.size) throw new Error(`ring sizes differ: ${peerThis.ring.length} vs ${ours.size}`);

  const lookupOurs = opsPerSecond((i) => {
    const h = HASHES[i & 4095] as readonly [number, number];
    consume(ours.find(h[0], h[1]) >= 0);
  }, measure);
  const lookupPeer = opsPerSecond(
    (i) => consume(peerPicker.findIndexForHash(BIG_HASHES[i & 4095] as bigint) >= 0),
    measure,
  );
  const rebuildOurs = opsPerSecond(() => consume(buildHashRing(endpoints, config.config)), {
    ...measure,
    sampleMs: measure.sampleMs * 2,
  });
  const rebuildPeerRate = opsPerSecond(
    () => {
      peerThis.ring = [];
      rebuildPeer();
      consume(peerThis.ring);
    },
    { ...measure, sampleMs: measure.sampleMs * 2 },
  );
  return [
    [
      "ring_hash lookup, 10,000 endpoints (ring 4,096)",
      `${(1e9 / lookupOurs).toFixed(0)} ns`,
      `${(1e9 / lookupPeer).toFixed(0)} ns`,
      ratio(lookupOurs / lookupPeer),
    ],
    [
      "ring_hash rebuild, 10,000 endpoints, min 1,024",
      `${(1e3 / rebuildOurs).toFixed(2)} ms`,
      `${(1e3 / rebuildPeerRate).toFixed(2)} ms`,
      ratio(rebuildOurs / rebuildPeerRate),
    ],
  ];
}

function wrrRows(): string[][] {
  const n = 1000;
  // Ours: the weighted_round_robin policy over READY stand-in subchannels, weights set through per-call reports.
  const subchannels: Subchannel[] = [];
  let picker: Picker | undefined;
  let now = 0;
  const helper: LbHelper = {
    createSubchannel(address, endpoint) {
      const s: Subchannel = {
        address,
        endpoint,
        state: "READY",
        lastError: undefined,
        watch: () => () => {},
        requestConnection() {},
        close() {},
      };
      subchannels.push(s);
      return s;
    },
    createEndpointSubchannel: (endpoint) => helper.createSubchannel(endpoint.addresses[0] ?? "", endpoint),
    requestReresolution() {},
    updateState: (_state, p) => {
      picker = p;
    },
    registry: createLbPolicyRegistry([]),
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    clock: { now: () => now, setTimeout: () => 0, clearTimeout() {} },
    random: Math.random,
    randomInt: (bound) => Math.floor(Math.random() * bound),
    target: "xds:///bench",
    metrics: { addCounter() {}, recordHistogram() {} },
  };
  const factory = createWrrPolicyFactory();
  const policy = factory.create(helper);
  const endpoints: LbEndpoint[] = Array.from({ length: n }, (_, i) => ({
    addresses: [`10.0.${i >> 8}.${i & 255}:80`],
    weight: 1,
    healthStatus: "HEALTHY",
    hostname: "",
    path: [],
  }));
  policy.update({ config: factory.parseConfig({ blackoutPeriod: "0s" }), endpoints });
  const info = { path: "/s/m", headers: new Headers() } as unknown as PickInfo;
  // One report per endpoint (utilization 0.1 .. 1.0), then a new picker whose scheduler uses them.
  for (let round = 0; round < 3 * n; round++) {
    const pick = picker?.pick(info);
    if (pick?.type !== "complete") throw new Error("expected complete picks");
    const i = Number(pick.subchannel.address.split(".")[3]?.split(":")[0]);
    pick.tracker?.onCallEnded?.({
      code: 0,
      trailers: new Headers(),
      orcaReport: { applicationUtilization: 0.1 + (i % 10) / 11, rpsFractional: 100 } as never,
    });
  }
  now += 1;
  policy.update({ config: factory.parseConfig({ blackoutPeriod: "0s", weightUpdatePeriod: "1s" }), endpoints });
  const ours = picker as Picker;
  const oursRate = opsPerSecond(() => consume(ours.pick(info)), measure);

  // grpc-js: WeightedRoundRobinPicker over the same weights, children answering with a COMPLETE pick.
  const peer = peerInternals("@grpc/grpc-js", "./build/src/load-balancer-weighted-round-robin.js", [
    "WeightedRoundRobinPicker",
  ]) as { WeightedRoundRobinPicker: new (children: unknown[], handler: unknown) => { pick(args: unknown): unknown } };
  const children = Array.from({ length: n }, (_, i) => {
    const complete = {
      pickResultType: 1,
      subchannel: { getWrappedSubchannel: () => ({}) },
      status: null,
      onCallStarted: null,
      onCallEnded: null,
    };
    return { endpointName: `e${i}`, weight: 100 / (0.1 + (i % 10) / 11), picker: { pick: () => complete } };
  });
  const peerPicker = new peer.WeightedRoundRobinPicker(children, null);
  const args = { metadata: {}, extraPickInfo: {} };
  const peerRate = opsPerSecond(() => consume(peerPicker.pick(args)), measure);
  policy.close();
  return [
    [
      "weighted_round_robin pick, 1,000 endpoints",
      `${(1e9 / oursRate).toFixed(0)} ns`,
      `${(1e9 / peerRate).toFixed(0)} ns`,
      ratio(oursRate / peerRate),
    ],
  ];
}

const file = create(FileDescriptorProtoSchema, {
  name: "bench/echo.proto",
  package: "bench",
  dependency: ["google/protobuf/wrappers.proto"],
  syntax: "proto3",
  service: [
    {
      name: "Echo",
      method: [
        { name: "Unary", inputType: ".google.protobuf.StringValue", outputType: ".google.protobuf.StringValue" },
      ],
    },
  ],
});
const Echo = createFileRegistry(file, (name) =>
  name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined,
).getService("bench.Echo");

async function retryRows(): Promise<string[][]> {
  if (Echo === undefined) throw new Error("no service");
  const backend = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(Echo, {
          unary: (r: { value: string }) => create(StringValueSchema, { value: r.value }),
        } as never),
    }),
  );
  backend.on("session", (s) => s.on("error", () => {}));
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  const port = (backend.address() as AddressInfo).port;
  const server = await createManagementServer();
  const route = (name: string, withRetry: boolean) => {
    const rc = buildRouteConfiguration({ name: `${name}-route`, cluster: "bench-cluster" });
    const action = rc.virtualHosts[0]?.routes[0]?.action;
    if (withRetry && action?.case === "route") {
      action.value.retryPolicy = create(RetryPolicySchema, { retryOn: "unavailable,cancelled", numRetries: 3 });
    }
    return [buildListener({ name, routeConfigName: `${name}-route` }), rc];
  };
  server.setSnapshot([
    ...route("plain", false),
    ...route("retry", true),
    buildCluster({ name: "bench-cluster" }),
    buildClusterLoadAssignment({
      clusterName: "bench-cluster",
      localities: [{ zone: "z", endpoints: [`127.0.0.1:${port}`] }],
    }),
  ]);
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
      node: { id: "bench" },
    },
  });
  const plainT = createXdsTransport({ target: "xds:///plain", client });
  const retryT = createXdsTransport({ target: "xds:///retry", client });
  const plain = createClient(Echo, plainT) as unknown as { unary(r: { value: string }): Promise<unknown> };
  const retry = createClient(Echo, retryT) as unknown as { unary(r: { value: string }): Promise<unknown> };
  const calls = quick ? 500 : 3000;
  const run = async (c: typeof plain) => {
    const start = performance.now();
    for (let i = 0; i < calls; i++) await c.unary({ value: "x" });
    return (performance.now() - start) / calls;
  };
  await run(plain);
  await run(retry);
  // Alternate the two so drift affects both alike; the median of five rounds each.
  const p: number[] = [];
  const r: number[] = [];
  for (let round = 0; round < 5; round++) {
    p.push(await run(plain));
    r.push(await run(retry));
  }
  await plainT.close();
  await retryT.close();
  await client.close();
  await server.close();
  await new Promise<void>((resolve) => backend.close(() => resolve()));
  const mp = median(p);
  const mr = median(r);
  return [
    [
      "unary call: never-firing retry policy vs none (us/call)",
      `${(mr * 1000).toFixed(1)}`,
      `${(mp * 1000).toFixed(1)}`,
      ratio(mr / mp),
    ],
  ];
}

const rows = [...(await ringRows()), ...wrrRows()];
printTable(
  "connect-xds policies: time per operation (ours, @grpc/grpc-js-xds or grpc-js, peer time / ours as 'faster')",
  ["operation", "xdskit", "peer", "ops ratio (xdskit/peer)"],
  rows,
);
const retry = await retryRows();
printTable(
  "retry policy overhead (xdskit only: with policy, without, with/without as cost)",
  ["case", "with", "without", "cost"],
  retry,
);
process.stdout.write(`\n${int(HASHES.length)} request hashes; --quick: ${quick}\n`);
process.exit(0);
