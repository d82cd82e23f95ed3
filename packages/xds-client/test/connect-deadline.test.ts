// A silent server is a connection error, not a missing resource: over real sockets on 127.0.0.1, a server that
// accepts TCP and never speaks HTTP/2 makes the connect deadline fail the call (UNAVAILABLE), while a real ADS
// server's stream counts as established at once.
import * as net from "node:net";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { afterEach, describe, expect, it } from "vitest";
import {
  createConnectTransport,
  createXdsClient,
  DEFAULT_CONNECT_TIMEOUT_MS,
  parseBootstrap,
  type XdsClient,
} from "../src/index.js";
import { recordingWatcher, summarize } from "./support/recorder.js";
import { type TestListener, testListenerType } from "./support/test-types.js";

let silent: net.Server | undefined;
const sockets = new Set<net.Socket>();
/** Connections the silent server accepted. */
let accepted = 0;
let client: XdsClient | undefined;
let controlPlane: ManagementServer | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  for (const s of sockets) s.destroy();
  sockets.clear();
  accepted = 0;
  if (silent) await new Promise<void>((resolve) => silent!.close(() => resolve()));
  silent = undefined;
  await controlPlane?.close();
  controlPlane = undefined;
});

/** A TCP server that accepts connections and never sends a byte. */
async function silentServer(): Promise<string> {
  silent = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => silent!.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
}

function bootstrap(serverUri: string) {
  return { xds_servers: [{ server_uri: serverUri, channel_creds: [{ type: "insecure" }] }], node: { id: "silent" } };
}

describe("the connect deadline over real sockets", () => {
  it("defaults to gRPC's 20 s minimum connect timeout", () => {
    expect(DEFAULT_CONNECT_TIMEOUT_MS).toBe(20_000);
  });

  it("waits out a connect deadline past Node's timer limit (30 days) instead of failing at once", async () => {
    // Node alone fires a timer of more than 2^31-1 ms after 1 ms (and warns): the deadline would fail every attempt.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const address = await silentServer();
      client = createXdsClient({ bootstrap: bootstrap(address), env: {}, connectTimeoutMs: 30 * 24 * 3_600_000 });
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "L", w);
      for (let i = 0; i < 500 && accepted === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(accepted).toBe(1);
      await new Promise((r) => setTimeout(r, 100));
      expect(summarize(w.take())).toEqual([]);
      expect(accepted).toBe(1);
      expect(warnings.filter((warning) => warning.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("turns a server that accepts TCP and never speaks into UNAVAILABLE, not does-not-exist", async () => {
    const address = await silentServer();
    client = createXdsClient({ bootstrap: bootstrap(address), env: {}, connectTimeoutMs: 300 });
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "L", w);
    for (let i = 0; i < 300 && w.events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const events = w.take();
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain(
      "DEADLINE_EXCEEDED: no HTTP/2 connection within the connect deadline of 300 ms",
    );
  });

  // Steps: (1) a silent server accepts the client's TCP connection; (2) the connect deadline fails the call; (3) the
  // retry (after backoff) dials a second TCP connection instead of waiting again on the first, silent one.
  it("retries on a new connection after the deadline, not on the silent one", async () => {
    const address = await silentServer();
    client = createXdsClient({ bootstrap: bootstrap(address), env: {}, connectTimeoutMs: 200 });
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "L", w);
    for (let i = 0; i < 1000 && w.events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(summarize(w.take())).toEqual(["error:UNAVAILABLE:connection"]);
    expect(accepted).toBe(1);
    for (let i = 0; i < 1000 && accepted < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(accepted).toBe(2);
  });

  it("counts a stream to a real ADS server as established, and one to a silent server as not", async () => {
    controlPlane = await createManagementServer({ host: "127.0.0.1", port: 0 });
    const real = createConnectTransport(parseBootstrap(bootstrap(controlPlane.address)).xdsServers[0]!, {
      maxReceiveMessageBytes: 1 << 20,
    });
    const quiet = createConnectTransport(parseBootstrap(bootstrap(await silentServer())).xdsServers[0]!, {
      maxReceiveMessageBytes: 1 << 20,
    });
    const toReal = real.streamAggregatedResources();
    const toQuiet = quiet.streamAggregatedResources();
    // The HTTP/2 request starts when the responses are first read.
    const reads = [toReal.responses.next().catch(() => {}), toQuiet.responses.next().catch(() => {})];
    const settled = (p: Promise<void> | undefined) =>
      Promise.race([p?.then(() => "established"), new Promise((r) => setTimeout(() => r("pending"), 500))]);
    expect(await settled(toReal.established)).toBe("established");
    expect(await settled(toQuiet.established)).toBe("pending");
    toReal.cancel();
    toQuiet.cancel();
    real.close();
    quiet.close();
    await Promise.all(reads);
  });
});
