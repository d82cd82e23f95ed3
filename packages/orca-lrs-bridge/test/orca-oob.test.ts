// Out-of-band ORCA (scenario 64) over real HTTP/2: our OpenRcaService and our OOB client. Both sides run their
// intervals and retries on virtual clocks the tests move.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OpenRcaService } from "@xdskit/protos/xds/service/orca/v3/orca_pb";
import { afterEach, describe, expect, test } from "vitest";
import { createOrcaOobClient, createServerMetricRecorder, type Logger, orcaServiceRoutes } from "../src/index.js";
import { startBackend, type TestBackend } from "./support/backend.js";
import { createVirtualClock, type VirtualClock } from "./support/virtual-clock.js";
import { waitUntil } from "./support/wait.js";

/** Counts StreamCoreMetrics calls and how many are open, on the server side. */
function callCounter() {
  const counter = { started: 0, open: 0, intervals: [] as number[] };
  const interceptor: Interceptor = (next) => async (req) => {
    if (req.method.name !== "StreamCoreMetrics") return next(req);
    counter.started++;
    counter.open++;
    req.signal.addEventListener("abort", () => counter.open--, { once: true });
    return next(req);
  };
  return { counter, interceptor };
}

function collectingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    error: (m) => lines.push(`error ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    info: () => {},
    debug: () => {},
  };
  return { lines, logger };
}

describe("out-of-band ORCA", () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function orcaBackend(serverClock: VirtualClock, minReportIntervalMs = 1000) {
    const recorder = createServerMetricRecorder();
    const { counter, interceptor } = callCounter();
    const backend = await startBackend({
      interceptors: [interceptor],
      routes: orcaServiceRoutes(recorder, { clock: serverClock, minReportIntervalMs }),
    });
    closers.push(() => backend.close());
    return { backend, recorder, counter };
  }

  function oobClient(backend: TestBackend, clock: VirtualClock, logger?: Logger) {
    const client = createOrcaOobClient({
      transport: createGrpcTransport({ baseUrl: backend.url }),
      clock,
      backoff: { initialMs: 100, multiplier: 2, jitter: 0 },
      ...(logger ? { logger } : {}),
    });
    closers.push(() => client.close());
    return client;
  }

  test("listeners share one call at the smallest interval; a change restarts it; the last one leaving cancels it", async () => {
    // 1. A listener at 5 s: one call; the server reports at once, then every 5 s (its clock shows the wait).
    // 2. A second listener at 2 s: the call restarts at 2 s; both listeners get every report.
    // 3. The 2 s listener leaves: back to 5 s (a third call). 4. The last leaves: the call is cancelled.
    const serverClock = createVirtualClock();
    const { backend, recorder, counter } = await orcaBackend(serverClock);
    recorder.setCpuUtilization(0.5);
    const client = oobClient(backend, createVirtualClock());
    const slow: OrcaLoadReport[] = [];
    const fast: OrcaLoadReport[] = [];
    const leaveSlow = client.subscribe({ intervalMs: 5000, onReport: (r) => slow.push(r) });
    await waitUntil(() => slow.length === 1, "the first report");
    expect(client.requestedIntervalMs).toBe(5000);
    await waitUntil(() => serverClock.pending().includes(5000), "the server waits 5 s");
    expect(slow).toEqual([create(OrcaLoadReportSchema, { cpuUtilization: 0.5 })]);

    const leaveFast = client.subscribe({ intervalMs: 2000, onReport: (r) => fast.push(r) });
    await waitUntil(() => counter.started === 2 && counter.open === 1 && fast.length === 1, "a restarted call");
    await waitUntil(() => serverClock.pending().includes(2000), "the server waits 2 s");
    recorder.setCpuUtilization(0.7);
    serverClock.advance(2000);
    await waitUntil(() => fast.length === 2, "the next report");
    expect(fast.map((r) => r.cpuUtilization)).toEqual([0.5, 0.7]);
    expect(slow.map((r) => r.cpuUtilization)).toEqual([0.5, 0.5, 0.7]);

    leaveFast();
    await waitUntil(() => counter.started === 3 && counter.open === 1, "back to one call at 5 s");
    expect(client.requestedIntervalMs).toBe(5000);
    leaveSlow();
    await waitUntil(() => counter.open === 0, "the call is cancelled");
    expect(client.state).toBe("idle");
  });

  test("the server never goes below its minimum (0 means the minimum) and sends a full report each interval", async () => {
    const serverClock = createVirtualClock();
    const { backend, recorder } = await orcaBackend(serverClock, 3000);
    recorder.setMemoryUtilization(0.2);
    for (const asked of [0, 1000]) {
      const reports: OrcaLoadReport[] = [];
      const client = oobClient(backend, createVirtualClock());
      client.subscribe({ intervalMs: asked, onReport: (r) => reports.push(r) });
      await waitUntil(() => reports.length === 1, "the first report");
      await waitUntil(() => serverClock.pending().includes(3000), "the server waits its minimum");
      serverClock.advance(3000);
      await waitUntil(() => reports.length === 2, "an unchanged report, sent anyway");
      expect(reports[1]).toEqual(reports[0]);
      client.close();
    }
  });

  test("UNIMPLEMENTED: logged as an error, never retried", async () => {
    const backend = await startBackend();
    closers.push(() => backend.close());
    const clock = createVirtualClock();
    const { lines, logger } = collectingLogger();
    const client = oobClient(backend, clock, logger);
    client.subscribe({ intervalMs: 1000, onReport: () => {} });
    await waitUntil(() => client.state === "unimplemented", "the client gives up");
    expect(clock.pending()).toEqual([]);
    expect(lines).toEqual([
      "error [orca-oob] the backend has no ORCA service (UNIMPLEMENTED): out-of-band reports are off for it",
    ]);
    // A new listener does not bring it back.
    client.subscribe({ intervalMs: 500, onReport: () => {} });
    expect(client.state).toBe("unimplemented");
  });

  test("other failures are retried with growing backoff, reset once a report arrives; close() cancels", async () => {
    // The service fails its first two calls with UNAVAILABLE, then sends one report and fails, then streams.
    let calls = 0;
    let open = 0;
    const backend = await startBackend({
      routes: (router) =>
        router.service(OpenRcaService, {
          async *streamCoreMetrics(_request, context) {
            calls++;
            open++;
            try {
              if (calls <= 2) throw new ConnectError("not yet", Code.Unavailable);
              yield create(OrcaLoadReportSchema, { eps: calls });
              if (calls === 3) throw new ConnectError("flaky", Code.Unavailable);
              await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
            } finally {
              open--;
            }
          },
        }),
    });
    closers.push(() => backend.close());
    const clock = createVirtualClock();
    const { lines, logger } = collectingLogger();
    const client = oobClient(backend, clock, logger);
    const reports: number[] = [];
    client.subscribe({ intervalMs: 1000, onReport: (r) => reports.push(r.eps) });
    await waitUntil(() => clock.pending().includes(100), "first retry in 100 ms");
    expect(client.state).toBe("backoff");
    clock.advance(100);
    await waitUntil(() => clock.pending().includes(200), "second retry in 200 ms");
    clock.advance(200);
    await waitUntil(() => reports.length === 1 && clock.pending().length === 1, "a report, then a failure");
    expect(clock.pending()).toEqual([100]);
    clock.advance(100);
    await waitUntil(() => reports.length === 2 && client.state === "streaming", "streaming again");
    expect(reports).toEqual([3, 4]);
    expect(lines.filter((l) => l.startsWith("warn")).map((l) => l.replace(/: \[unavailable\].*;/, ";"))).toEqual([
      "warn [orca-oob] StreamCoreMetrics failed; retrying in 100 ms",
      "warn [orca-oob] StreamCoreMetrics failed; retrying in 200 ms",
      "warn [orca-oob] StreamCoreMetrics failed; retrying in 100 ms",
    ]);
    client.close();
    await waitUntil(() => open === 0, "the server sees the call cancelled");
    expect(client.state).toBe("closed");
    expect(clock.pending()).toEqual([]);
  });
});
