// The out-of-band ORCA service (A51): `OpenRcaService.StreamCoreMetrics` sends the server recorder's values at
// once, then every interval, whether or not they changed. The interval is the one asked for, but never below the
// server's minimum (an interval of 0 means the minimum). Request costs are per-call only: never sent here.
import type { ConnectRouter } from "@connectrpc/connect";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OpenRcaService } from "@xdskit/protos/xds/service/orca/v3/orca_pb";
import { type Clock, systemClock } from "./clock.js";
import { durationToMs } from "./duration.js";
import type { ServerMetricRecorder } from "./metric-recorder.js";

export interface OrcaServiceOptions {
  /** The shortest interval a client may get. Default 30,000 (A51). */
  readonly minReportIntervalMs?: number;
  readonly clock?: Clock;
}

/** Registers `xds.service.orca.v3.OpenRcaService` on a Connect router. */
export function orcaServiceRoutes(
  recorder: ServerMetricRecorder,
  options: OrcaServiceOptions = {},
): (router: ConnectRouter) => void {
  const minMs = options.minReportIntervalMs ?? 30_000;
  if (!(minMs > 0)) throw new RangeError("orcaServiceRoutes: minReportIntervalMs must be > 0");
  const clock = options.clock ?? systemClock;
  return (router) =>
    router.service(OpenRcaService, {
      async *streamCoreMetrics(request, context): AsyncGenerator<OrcaLoadReport> {
        const intervalMs = Math.max(durationToMs(request.reportInterval), minMs);
        while (!context.signal.aborted) {
          yield recorder.report();
          await sleep(clock, intervalMs, context.signal);
        }
      },
    });
}

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
