// Per-call ORCA over real HTTP/2: a Connect backend with the server interceptor, read by the Connect and grpc-js
// client interceptors.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import {
  ClientStatusDiscoveryService,
  ClientStatusRequestSchema,
  ClientStatusResponseSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadReportingGrpcJsInterceptor, orcaGrpcJsInterceptor } from "../src/grpc-js.js";
import {
  type CallOutcome,
  createServerMetricRecorder,
  type LocalityStats,
  loadReportingInterceptor,
  type OrcaMetrics,
  orcaCallRecorder,
  orcaClientInterceptor,
  orcaServerInterceptor,
} from "../src/index.js";
import { startBackend, type TestBackend } from "./support/backend.js";

const report = (init: Parameters<typeof create<typeof OrcaLoadReportSchema>>[1]) => create(OrcaLoadReportSchema, init);

/** A LocalityStats that records what it was told, for checking what an interceptor reports. */
function recordingStats() {
  const events: (["started"] | ["finished", CallOutcome, OrcaMetrics | undefined])[] = [];
  const stats: LocalityStats = {
    callStarted: () => events.push(["started"]),
    callFinished: (outcome, orca) => events.push(["finished", outcome, orca]),
    release: () => {},
  };
  return { stats, events };
}

describe("per-call ORCA between a Connect backend and Connect / grpc-js clients", () => {
  let backend: TestBackend;
  const serverRecorder = createServerMetricRecorder();

  beforeAll(async () => {
    // The request's node id tells the handler what to do: "record", "fail", "server-only" or "nothing".
    backend = await startBackend({
      interceptors: [orcaServerInterceptor({ serverRecorder })],
      handle(request, context) {
        const recorder = orcaCallRecorder(context);
        const mode = request.node?.id ?? "";
        if (mode === "record" || mode === "fail") {
          recorder.recordCpuUtilization(0.1);
          recorder.recordNamedMetric("b", 5);
          recorder.recordRequestCost("c", 3);
          // Refused (out of range): the values above stay.
          expect(recorder.recordCpuUtilization(-1)).toBe(false);
          expect(recorder.recordMemoryUtilization(1.5)).toBe(false);
        }
        if (mode === "fail") throw new ConnectError("failing on purpose", Code.ResourceExhausted);
      },
    });
  });
  afterAll(() => backend.close());

  function connectClient(interceptors: Interceptor[]) {
    return createClient(ClientStatusDiscoveryService, createGrpcTransport({ baseUrl: backend.url, interceptors }));
  }

  test("the call's values override the server's, key by key; request costs are per call", async () => {
    serverRecorder.setCpuUtilization(0.9);
    serverRecorder.setMemoryUtilization(0.3);
    serverRecorder.setNamedMetric("a", 1);
    serverRecorder.setNamedMetric("b", 2);
    serverRecorder.setUtilization("u", 0.5);
    const reports: OrcaLoadReport[] = [];
    const client = connectClient([orcaClientInterceptor({ onReport: (r) => reports.push(r) })]);
    await client.fetchClientStatus({ node: { id: "record" } });
    expect(reports).toEqual([
      report({
        cpuUtilization: 0.1,
        memUtilization: 0.3,
        namedMetrics: { a: 1, b: 5 },
        utilization: { u: 0.5 },
        requestCost: { c: 3 },
      }),
    ]);
    // The OOB view of the same server recorder has no request costs and no per-call values.
    expect(serverRecorder.report()).toEqual(
      report({ cpuUtilization: 0.9, memUtilization: 0.3, namedMetrics: { a: 1, b: 2 }, utilization: { u: 0.5 } }),
    );
  });

  test("nothing recorded anywhere: no trailer, no report; the server's values alone: a report", async () => {
    for (const clear of [
      () => serverRecorder.clearCpuUtilization(),
      () => serverRecorder.clearMemoryUtilization(),
      () => serverRecorder.clearNamedMetric("a"),
      () => serverRecorder.clearNamedMetric("b"),
      () => serverRecorder.clearUtilization("u"),
    ])
      clear();
    const reports: OrcaLoadReport[] = [];
    const client = connectClient([orcaClientInterceptor({ onReport: (r) => reports.push(r) })]);
    let trailer: Headers | undefined;
    await client.fetchClientStatus({ node: { id: "nothing" } }, { onTrailer: (t) => (trailer = t) });
    expect(trailer?.has("endpoint-load-metrics-bin")).toBe(false);
    expect(reports).toEqual([]);

    serverRecorder.setApplicationUtilization(0.4);
    await client.fetchClientStatus({ node: { id: "server-only" } });
    expect(reports).toEqual([report({ applicationUtilization: 0.4 })]);
    serverRecorder.clearApplicationUtilization();
  });

  test("a failing call still carries its report; the load interceptor counts it as an error with the report", async () => {
    const { stats, events } = recordingStats();
    const client = connectClient([loadReportingInterceptor({ stats })]);
    await expect(client.fetchClientStatus({ node: { id: "fail" } })).rejects.toMatchObject({
      code: Code.ResourceExhausted,
    });
    expect(events).toEqual([
      ["started"],
      ["finished", "error", report({ cpuUtilization: 0.1, namedMetrics: { b: 5 }, requestCost: { c: 3 } })],
    ]);
  });

  test("a stream's report arrives with its trailers, when the responses end", async () => {
    const { stats, events } = recordingStats();
    const client = connectClient([loadReportingInterceptor({ stats })]);
    const requests = [1, 2].map(() => create(ClientStatusRequestSchema, { node: { id: "record" } }));
    async function* send() {
      yield* requests;
    }
    let responses = 0;
    for await (const _ of client.streamClientStatus(send())) {
      responses++;
      expect(events).toEqual([["started"]]);
    }
    expect(responses).toBe(2);
    expect(events).toEqual([
      ["started"],
      ["finished", "ok", report({ cpuUtilization: 0.1, namedMetrics: { b: 5 }, requestCost: { c: 3 } })],
    ]);
  });

  test("the grpc-js interceptors read the same trailer (already base64-decoded by grpc-js)", async () => {
    const { stats, events } = recordingStats();
    const seen: OrcaLoadReport[] = [];
    const client = new grpc.Client(backend.address, grpc.credentials.createInsecure(), {
      interceptors: [
        loadReportingGrpcJsInterceptor({ stats }),
        orcaGrpcJsInterceptor({ onReport: (r) => seen.push(r) }),
      ],
    });
    const call = (id: string) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        client.makeUnaryRequest(
          "/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus",
          (m: ReturnType<typeof create<typeof ClientStatusRequestSchema>>) =>
            Buffer.from(toBinary(ClientStatusRequestSchema, m)),
          (b: Buffer) => fromBinary(ClientStatusResponseSchema, b),
          create(ClientStatusRequestSchema, { node: { id } }),
          (error) => resolve(error),
        );
      });
    try {
      expect(await call("record")).toBeNull();
      expect((await call("fail"))?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(await call("nothing")).toBeNull();
    } finally {
      client.close();
    }
    const expected = report({ cpuUtilization: 0.1, namedMetrics: { b: 5 }, requestCost: { c: 3 } });
    expect(seen).toEqual([expected, expected]);
    expect(events).toEqual([
      ["started"],
      ["finished", "ok", expected],
      ["started"],
      ["finished", "error", expected],
      ["started"],
      ["finished", "ok", undefined],
    ]);
  });

  test("a malformed report is not delivered: the error goes to onError and the call counts without one", async () => {
    const bad = await startBackend({
      handle: (_request, context) => {
        context.responseTrailer.set("endpoint-load-metrics", "cpu_utilization:0.5,cpu_utilization:0.6");
      },
    });
    try {
      const errors: string[] = [];
      const reports: OrcaLoadReport[] = [];
      const { stats, events } = recordingStats();
      const client = createClient(
        ClientStatusDiscoveryService,
        createGrpcTransport({
          baseUrl: bad.url,
          interceptors: [
            orcaClientInterceptor({ onReport: (r) => reports.push(r), onError: (e) => errors.push(e.message) }),
            loadReportingInterceptor({ stats, onOrcaError: (e) => errors.push(`load: ${e.format}`) }),
          ],
        }),
      );
      await client.fetchClientStatus({});
      expect(reports).toEqual([]);
      expect(errors.sort()).toEqual([
        "endpoint-load-metrics: metric cpu_utilization appears more than once",
        "load: native",
      ]);
      expect(events).toEqual([["started"], ["finished", "ok", undefined]]);
    } finally {
      await bad.close();
    }
  });
});

describe("today's Envoy header forms over HTTP/2 (a backend written for Envoy)", () => {
  // The request's node id is the endpoint-load-metrics value to send; "with-bin:<value>" sends -bin (eps 7) too.
  let envoyBackend: TestBackend;
  beforeAll(async () => {
    envoyBackend = await startBackend({
      handle(request, context) {
        let value = request.node?.id ?? "";
        if (value.startsWith("with-bin:")) {
          value = value.slice("with-bin:".length);
          const bin = Buffer.from(toBinary(OrcaLoadReportSchema, report({ eps: 7 }))).toString("base64");
          context.responseTrailer.set("endpoint-load-metrics-bin", bin);
        }
        context.responseTrailer.set("endpoint-load-metrics", value);
      },
    });
  });
  afterAll(() => envoyBackend.close());

  const b64 = (r: OrcaLoadReport) => Buffer.from(toBinary(OrcaLoadReportSchema, r)).toString("base64");
  const wanted = report({ cpuUtilization: 0.25, namedMetrics: { queue: 3 } });
  const values = [
    "TEXT cpu_utilization:0.25, named_metrics.queue:3",
    `JSON ${JSON.stringify({ cpuUtilization: 0.25, namedMetrics: { queue: 3 } })}`,
    `BIN ${b64(wanted)}`,
    "cpu_utilization:0.25,named_metrics.queue:3", // the earlier, unprefixed form
  ];

  test("Connect and grpc-js clients read BIN, TEXT, JSON and the unprefixed form; -bin wins beside any", async () => {
    const connectReports: OrcaLoadReport[] = [];
    const connect = createClient(
      ClientStatusDiscoveryService,
      createGrpcTransport({
        baseUrl: envoyBackend.url,
        interceptors: [orcaClientInterceptor({ onReport: (r) => connectReports.push(r) })],
      }),
    );
    const grpcReports: OrcaLoadReport[] = [];
    const grpcClient = new grpc.Client(envoyBackend.address, grpc.credentials.createInsecure(), {
      interceptors: [orcaGrpcJsInterceptor({ onReport: (r) => grpcReports.push(r) })],
    });
    const grpcCall = (id: string) =>
      new Promise<void>((resolve, reject) => {
        grpcClient.makeUnaryRequest(
          "/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus",
          (m: ReturnType<typeof create<typeof ClientStatusRequestSchema>>) =>
            Buffer.from(toBinary(ClientStatusRequestSchema, m)),
          (b: Buffer) => fromBinary(ClientStatusResponseSchema, b),
          create(ClientStatusRequestSchema, { node: { id } }),
          (error) => (error ? reject(error) : resolve()),
        );
      });
    try {
      for (const value of values) {
        await connect.fetchClientStatus({ node: { id: value } });
        await grpcCall(value);
      }
      await connect.fetchClientStatus({ node: { id: "with-bin:TEXT eps:1" } });
      await grpcCall("with-bin:JSON {}");
    } finally {
      grpcClient.close();
    }
    const expected = [...values.map(() => wanted), report({ eps: 7 })];
    expect(connectReports).toEqual(expected);
    expect(grpcReports).toEqual(expected);
  });
});

describe("the recorders refuse values outside A51's ranges and keep the previous one", () => {
  test("server recorder", () => {
    const recorder = createServerMetricRecorder();
    expect(recorder.setCpuUtilization(2.5)).toBe(true);
    expect(recorder.setCpuUtilization(-0.5)).toBe(false);
    expect(recorder.setMemoryUtilization(1.2)).toBe(false);
    expect(recorder.setQps(Number.NaN)).toBe(false);
    expect(recorder.setEps(-1)).toBe(false);
    expect(recorder.setUtilization("x", 1.5)).toBe(false);
    expect(recorder.setAllUtilization({ y: 0.5 })).toBe(true);
    expect(recorder.setAllUtilization({ y: 0.1, z: 2 })).toBe(false);
    expect(recorder.setNamedMetric("n", -7)).toBe(true);
    expect(recorder.report()).toEqual(
      report({ cpuUtilization: 2.5, utilization: { y: 0.5 }, namedMetrics: { n: -7 } }),
    );
  });
});
