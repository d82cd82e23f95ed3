// Calls and load reports through the relay, over real HTTP/2: @xdskit/connect-xds routes real calls with its
// configuration from a relay, each client in the TP2 variant its parameters choose; LRS is forwarded per stream with
// the client's node (docs/decisions.md#relay-load-reports): the upstream's LoadStatsResponse passes through, A85's
// named metrics go from a backend's ORCA report through the client and the relay to the control plane's sink, and a
// stream whose node changes is refused as the control plane refuses it.
import { create } from "@bufbuild/protobuf";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createXdsTransport, type XdsTransport } from "@xdskit/connect-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type ResourceInput,
  type ResourceMessage,
} from "@xdskit/control-plane";
import { createServerMetricRecorder, orcaServerInterceptor, SEND_ALL_CLUSTERS_FEATURE } from "@xdskit/orca-lrs-bridge";
import {
  LoadReportingService,
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { afterEach, describe, expect, it } from "vitest";
import { type Backend, servedBy, startBackend } from "./support/backend.js";
import { bootstrapFor, closeAll, startRelay, startUpstream } from "./support/harness.js";

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
  await closeAll();
});

async function backend(name: string, interceptors?: Parameters<typeof startBackend>[1]): Promise<Backend> {
  const started = await startBackend(name, interceptors);
  opened.push(started);
  return started;
}

function transportThrough(
  relayAddress: string,
  nodeId: string,
  dynamicParameters?: Record<string, string>,
): XdsTransport {
  const transport = createXdsTransport({
    target: "xds:///svc",
    bootstrap: {
      ...bootstrapFor(relayAddress, nodeId),
      ...(dynamicParameters ? { dynamic_parameters: dynamicParameters } : {}),
    },
  });
  opened.push(transport);
  return transport;
}

/** The service chain svc -> svc-route -> svc-cluster; the cluster and endpoints as given. */
function chain(...rest: (ResourceMessage | ResourceInput)[]) {
  return [
    buildListener({ name: "svc", routeConfigName: "svc-route" }),
    buildRouteConfiguration({ name: "svc-route", cluster: "svc-cluster" }),
    ...rest,
  ];
}

describe("calls routed by configuration from a relay", () => {
  it("each client calls the backends of the TP2 variant its parameters choose; one upstream stream for both", async () => {
    const [prod, test] = await Promise.all([backend("prod"), backend("test")]);
    const upstream = await startUpstream();
    upstream.setResources(
      chain(
        { resource: buildCluster({ name: "svc-cluster", edsServiceName: "prod-eps" }), constraints: "env=prod" },
        { resource: buildCluster({ name: "svc-cluster", edsServiceName: "test-eps" }), constraints: "env=test" },
        buildClusterLoadAssignment({ clusterName: "prod-eps", localities: [{ zone: "a", endpoints: [prod.address] }] }),
        buildClusterLoadAssignment({ clusterName: "test-eps", localities: [{ zone: "a", endpoints: [test.address] }] }),
      ),
    );
    const relay = await startRelay(upstream.address);
    const prodClient = transportThrough(relay.address, "prod-client", { env: "prod" });
    const testClient = transportThrough(relay.address, "test-client", { env: "test" });
    for (let i = 0; i < 3; i++) {
      expect(await servedBy(prodClient)).toBe("prod");
      expect(await servedBy(testClient)).toBe("test");
    }
    expect(upstream.streams().map((s) => s.node?.id)).toEqual(["relay"]);
  });
});

describe("load reports through the relay", () => {
  it("carries A85's named metrics from a backend's ORCA report through the client and the relay to the sink", async () => {
    const recorder = createServerMetricRecorder();
    recorder.setNamedMetric("foo", 2);
    recorder.setNamedMetric("bar", 7);
    const b = await backend("b", [orcaServerInterceptor({ serverRecorder: recorder })]);
    const upstream = await startUpstream({ lrsPolicy: { clusters: "all", intervalMs: 1000 } });
    const cluster = buildCluster({ name: "svc-cluster", lrsServerSelf: true });
    cluster.lrsReportEndpointMetrics = ["named_metrics.foo"];
    upstream.setResources(
      chain(
        cluster,
        buildClusterLoadAssignment({
          clusterName: "svc-cluster",
          localities: [{ zone: "z1", endpoints: [b.address] }],
        }),
      ),
    );
    const relay = await startRelay(upstream.address);
    const client = transportThrough(relay.address, "reporting-client");
    const calls = 5;
    for (let i = 0; i < calls; i++) expect(await servedBy(client)).toBe("b");

    // The sink sees the client's node (the relay forwards as the client), the calls, and foo only (A85 selects it).
    const total = () => {
      let succeeded = 0;
      let foo = 0;
      let fooCount = 0;
      let bar = 0;
      for (const load of upstream.lrs.latestLoads({ nodeId: "reporting-client", clusterName: "svc-cluster" }))
        void load;
      for (const event of upstream.lrs.reports()) {
        if (event.nodeId !== "reporting-client") continue;
        for (const load of event.loads) {
          for (const locality of load.localities) {
            succeeded += locality.succeeded;
            foo += locality.metrics["named_metrics.foo"]?.total ?? 0;
            fooCount += locality.metrics["named_metrics.foo"]?.count ?? 0;
            bar += locality.metrics["named_metrics.bar"]?.count ?? 0;
          }
        }
      }
      return { succeeded, foo, fooCount, bar };
    };
    await upstream.lrs.waitForReport(() => total().succeeded >= calls, 15_000);
    expect(total()).toEqual({ succeeded: calls, foo: 2 * calls, fooCount: calls, bar: 0 });
    expect(upstream.lrs.streams().map((s) => s.nodeId)).toEqual(["reporting-client"]);
    // The relay's own sink keeps nothing: it forwards.
    expect(relay.stats().lrsStreams).toBe(1);
  });

  it("passes the upstream's LoadStatsResponse through, and each report as sent", async () => {
    const upstream = await startUpstream();
    upstream.lrs.setPolicy({ clusters: ["c1", "c2"], intervalMs: 1500 }, "fixed");
    upstream.lrs.setPolicy({ clusters: "all", intervalMs: 2000 }, "all");
    const relay = await startRelay(upstream.address);
    const fixed = lrsStream(relay.url);
    await fixed.send({ node: { id: "fixed" } });
    const first = await fixed.next();
    expect([first.clusters, first.sendAllClusters, Number(first.loadReportingInterval?.seconds)]).toEqual([
      ["c1", "c2"],
      false,
      1,
    ]);
    expect(first.loadReportingInterval?.nanos).toBe(500_000_000);
    const all = lrsStream(relay.url);
    await all.send({ node: { id: "all", clientFeatures: [SEND_ALL_CLUSTERS_FEATURE] } });
    expect((await all.next()).sendAllClusters).toBe(true);

    const mark = upstream.lrs.mark();
    await fixed.send({
      clusterStats: [
        {
          clusterName: "c1",
          upstreamLocalityStats: [{ locality: { zone: "z" }, totalSuccessfulRequests: 3n, totalIssuedRequests: 3n }],
        },
      ],
    });
    const report = await upstream.lrs.waitForReport((e) => e.nodeId === "fixed", { after: mark });
    expect(report.loads.map((l) => [l.clusterName, l.localities[0]?.succeeded])).toEqual([["c1", 3]]);
    // A policy change upstream reaches the client through its stream.
    upstream.lrs.setPolicy({ clusters: ["c3"], intervalMs: 1500 }, "fixed");
    expect((await fixed.next()).clusters).toEqual(["c3"]);
    fixed.close();
    all.close();
  });

  it("refuses a stream whose node changes, INVALID_ARGUMENT as the control plane does, and ends its upstream stream", async () => {
    const upstream = await startUpstream();
    const relay = await startRelay(upstream.address);
    const stream = lrsStream(relay.url);
    await stream.send({ node: { id: "one" } });
    await stream.next();
    expect(upstream.lrs.streams().map((s) => s.nodeId)).toEqual(["one"]);
    await stream.send({ node: { id: "two" }, clusterStats: [{ clusterName: "c" }] });
    const error = await stream.ended();
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toContain('cannot change its node (from "one" to "two")');
    // Nothing of it reached the sink, and its upstream stream is gone.
    expect(upstream.lrs.reports().filter((e) => e.nodeId === "two")).toEqual([]);
    await until(() => upstream.lrs.streams().length === 0);
  });

  it("ends a downstream stream UNAVAILABLE when the upstream cannot be reached, so the client retries", async () => {
    const upstream = await startUpstream();
    const relay = await startRelay(upstream.address);
    await upstream.stop();
    const stream = lrsStream(relay.url);
    await stream.send({ node: { id: "n" } });
    const error = await stream.ended();
    expect(error?.code).toBe(Code.Unavailable);
  });
});

/** Polls `condition` until it holds (for state without an event to wait on: the sink's open streams). */
async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A raw LRS stream to `url`: requests from @xdskit/protos, responses buffered. */
function lrsStream(url: string) {
  const requests = createWritableIterable<LoadStatsRequest>();
  const abort = new AbortController();
  const client = createClient(LoadReportingService, createGrpcTransport({ baseUrl: url }));
  const buffered: LoadStatsResponse[] = [];
  let done = false;
  let error: ConnectError | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const response of client.streamLoadStats(requests, { signal: abort.signal })) {
        buffered.push(response);
        wake?.();
      }
    } catch (e) {
      error = e as ConnectError;
    }
    done = true;
    wake?.();
  })();
  const waitFor = async (cond: () => boolean) => {
    const deadline = Date.now() + 5_000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    send: (request: Parameters<typeof create<typeof LoadStatsRequestSchema>>[1]) =>
      requests.write(create(LoadStatsRequestSchema, request)),
    async next() {
      await waitFor(() => buffered.length > 0 || done);
      const response = buffered.shift();
      if (!response) throw new Error(`the stream ended: ${String(error?.message)}`);
      return response;
    },
    async ended() {
      await waitFor(() => done);
      return error;
    },
    close: () => abort.abort(),
  };
}
