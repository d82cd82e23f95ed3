// The backend side for @connectrpc/connect servers: an interceptor that gives each call a recorder and sends what
// the handler recorded (over the server's values) as the `endpoint-load-metrics-bin` trailer.
import { toBinary } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, createContextKey, type Interceptor } from "@connectrpc/connect";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import {
  type CallMetricRecorder,
  createCallMetricRecorder,
  isEmpty,
  type MetricValues,
  type ServerMetricRecorder,
  serverValues,
  toReport,
} from "./metric-recorder.js";
import { ORCA_BIN_TRAILER } from "./orca-trailers.js";

const recorderKey = createContextKey<CallMetricRecorder | undefined>(undefined, {
  description: "ORCA per-call metric recorder",
});

const discard = () => false;
/** What handlers get when the interceptor is not installed: records nothing. */
const noopRecorder: CallMetricRecorder = Object.freeze({
  recordCpuUtilization: discard,
  recordMemoryUtilization: discard,
  recordApplicationUtilization: discard,
  recordQps: discard,
  recordEps: discard,
  recordUtilization: discard,
  recordRequestCost: discard,
  recordNamedMetric: discard,
});

/** The current call's recorder, from a handler's context (`context.values`). */
export function orcaCallRecorder(context: { readonly values: ContextValues }): CallMetricRecorder {
  return context.values.get(recorderKey) ?? noopRecorder;
}

export interface OrcaServerInterceptorOptions {
  /** Values of the whole server, sent in every call's report unless the call records its own. */
  readonly serverRecorder?: ServerMetricRecorder;
}

/**
 * Sends each call's ORCA report in its trailers, also when the handler fails. A call for which nothing was
 * recorded (by the handler or on the server recorder) sends no trailer.
 */
export function orcaServerInterceptor(options: OrcaServerInterceptorOptions = {}): Interceptor {
  const server = options.serverRecorder === undefined ? undefined : serverValues(options.serverRecorder);
  if (options.serverRecorder !== undefined && server === undefined) {
    throw new TypeError("orcaServerInterceptor: serverRecorder must come from createServerMetricRecorder()");
  }
  const attach = (call: MetricValues, trailers: Headers): void => {
    if (isEmpty(call) && (server === undefined || isEmpty(server))) return;
    const bytes = toBinary(OrcaLoadReportSchema, toReport(server, call));
    trailers.set(ORCA_BIN_TRAILER, Buffer.from(bytes).toString("base64"));
  };
  return (next) => async (req) => {
    const recorder = createCallMetricRecorder();
    req.contextValues.set(recorderKey, recorder);
    try {
      const res = await next(req);
      if (!res.stream) {
        attach(recorder.values, res.trailer);
        return res;
      }
      const messages = res.message;
      async function* withTrailer() {
        try {
          yield* messages;
        } catch (error) {
          const connectError = ConnectError.from(error);
          attach(recorder.values, connectError.metadata);
          throw connectError;
        }
        attach(recorder.values, res.trailer);
      }
      return { ...res, message: withTrailer() };
    } catch (error) {
      const connectError = ConnectError.from(error);
      attach(recorder.values, connectError.metadata);
      throw connectError;
    }
  };
}
