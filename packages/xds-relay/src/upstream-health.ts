// Whether the relay's upstream server can be reached, for an operator watching the relay: what its upstream client's
// ADS streams show (A78 counters: a server failure, a response received), and, while that says nothing (no stream
// open yet, or the server down), an HTTP/2 handshake with the server now and then (a probe: TCP, TLS, the HTTP/2
// preface, nothing sent on it).

import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import { XdsMetricName, type XdsMetricsRecorder, type XdsServerConfig } from "@xdskit/xds-client";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";

export type UpstreamState = "unknown" | "reachable" | "unreachable";

export interface UpstreamHealthEvent {
  readonly server: string;
  readonly state: Exclude<UpstreamState, "unknown">;
  /** Why it is unreachable. */
  readonly detail?: string;
}

export interface UpstreamHealth {
  readonly state: UpstreamState;
  /** The client's metrics recorder, with what the health reads from it added in front. */
  readonly metrics: XdsMetricsRecorder;
  onChange(listener: (event: UpstreamHealthEvent) => void): () => void;
  /** Probes now (and again while unreachable, every `retryMs`), unless the state is already known. */
  start(): void;
  close(): void;
}

export interface UpstreamHealthOptions {
  readonly server: XdsServerConfig;
  readonly inner: XdsMetricsRecorder | undefined;
  /** How long a probe waits for the handshake. */
  readonly probeTimeoutMs?: number;
  /** How often an unreachable server is probed again. */
  readonly retryMs?: number;
}

function baseUrlOf(server: XdsServerConfig): string {
  const target = server.serverUri.replace(/^dns:(\/\/[^/]*\/)?/, "").replace(/^ipv[46]:/, "");
  return `${server.channelCredentials.type === "tls" ? "https" : "http"}://${target}`;
}

/** One HTTP/2 handshake with the server: undefined when it answered, else why not. */
function probe(server: XdsServerConfig, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let session: http2.ClientHttp2Session | undefined;
    let done = false;
    const finish = (why: string | undefined) => {
      if (done) return;
      done = true;
      clearLongTimer(timer);
      session?.destroy();
      resolve(why);
    };
    const timer = setLongTimeout(() => finish(`no HTTP/2 handshake within ${timeoutMs} ms`), timeoutMs);
    try {
      const creds = server.channelCredentials;
      const pem = (file: string | undefined) => (file === undefined ? undefined : readFileSync(file));
      const tls =
        creds.type === "tls"
          ? {
              ...(creds.caCertificateFile === undefined ? {} : { ca: pem(creds.caCertificateFile) }),
              ...(creds.certificateFile === undefined ? {} : { cert: pem(creds.certificateFile) }),
              ...(creds.privateKeyFile === undefined ? {} : { key: pem(creds.privateKeyFile) }),
            }
          : {};
      session = http2.connect(baseUrlOf(server), tls);
      session.once("remoteSettings", () => finish(undefined));
      session.once("error", (error) => finish(error.message));
      session.once("close", () => finish("the connection closed"));
    } catch (error) {
      finish(error instanceof Error ? error.message : String(error));
    }
  });
}

export function createUpstreamHealth(options: UpstreamHealthOptions): UpstreamHealth {
  const { server, inner } = options;
  const probeTimeoutMs = options.probeTimeoutMs ?? 5_000;
  const retryMs = options.retryMs ?? 5_000;
  const listeners = new Set<(event: UpstreamHealthEvent) => void>();
  let state: UpstreamState = "unknown";
  let retry: LongTimer | undefined;
  let probing = false;
  let closed = false;

  const set = (next: Exclude<UpstreamState, "unknown">, detail?: string) => {
    if (closed || state === next) return;
    state = next;
    if (next === "reachable") clearLongTimer(retry);
    else scheduleProbe();
    const event = { server: server.serverUri, state: next, ...(detail === undefined ? {} : { detail }) };
    for (const listener of [...listeners]) listener(event);
  };
  // A unix socket target is not probed (its state comes from the ADS stream alone).
  const probeable = !/^unix(-abstract)?:/.test(server.serverUri);
  const runProbe = () => {
    if (probing || closed || !probeable) return;
    probing = true;
    void probe(server, probeTimeoutMs).then((why) => {
      probing = false;
      if (why === undefined) set("reachable");
      else if (state !== "unreachable") set("unreachable", why);
      else scheduleProbe();
    });
  };
  const scheduleProbe = () => {
    clearLongTimer(retry);
    if (closed) return;
    retry = setLongTimeout(runProbe, retryMs);
    retry.unref();
  };
  const metrics: XdsMetricsRecorder = {
    addCounter(name, value, labels) {
      if (labels["grpc.xds.server"] === server.serverUri) {
        if (name === XdsMetricName.serverFailure) set("unreachable", "its ADS stream failed with no response");
        else if (name === XdsMetricName.resourceUpdatesValid || name === XdsMetricName.resourceUpdatesInvalid) {
          set("reachable");
        }
      }
      inner?.addCounter(name, value, labels);
    },
    ...(inner?.registerGauges ? { registerGauges: (callback) => inner.registerGauges!(callback) } : {}),
  };
  return {
    get state() {
      return state;
    },
    metrics,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      if (state === "unknown") runProbe();
    },
    close() {
      closed = true;
      clearLongTimer(retry);
      listeners.clear();
    },
  };
}
