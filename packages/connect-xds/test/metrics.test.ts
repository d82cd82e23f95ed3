// A66 per-call metrics with A78's locality label, through a recorder that keeps what it is given. Message sizes are
// exact: a StringValue "x" is 3 bytes on the wire, "a:x" 5.
import { Code } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CallMetricsRecorder, createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, values } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

interface Recorded {
  readonly name: string;
  readonly value: number;
  readonly labels: Readonly<Record<string, string>>;
}

function recorder(): CallMetricsRecorder & { records: Recorded[] } {
  const records: Recorded[] = [];
  return {
    records,
    addCounter: (name, value, labels) => records.push({ name, value, labels }),
    recordHistogram: (name, value, labels) => records.push({ name, value, labels }),
  };
}

const LOCALITY = '{region="", zone="z1", sub_zone=""}';
const METHOD = "xdskit.test.Echo/Unary";

describe("per-call metrics", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let transport: XdsTransport;
  const metrics = recorder();

  beforeAll(async () => {
    server = await startControlPlane();
    a = await startBackend("a");
    server.setSnapshot(simpleSnapshot("metered", "metered-cluster", [{ zone: "z1", endpoints: [a.address] }]));
    client = clientFor(server);
    transport = createXdsTransport({ target: "xds:///metered", client, metrics });
  });

  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all([a.close(), server.close()]);
  });

  it("records attempt.started, the attempt's duration and message sizes with the locality, and the call's duration", async () => {
    metrics.records.length = 0;
    await echoClient(transport).unary({ value: "x" });
    const target = "xds:///metered";
    const status = { "grpc.method": METHOD, "grpc.target": target, "grpc.status": "OK" };
    const attempt = { ...status, "grpc.lb.locality": LOCALITY };
    expect(metrics.records.map(({ name, labels }) => ({ name, labels }))).toEqual([
      { name: "grpc.client.attempt.started", labels: { "grpc.method": METHOD, "grpc.target": target } },
      { name: "grpc.client.attempt.duration", labels: attempt },
      { name: "grpc.client.attempt.sent_total_compressed_message_size", labels: attempt },
      { name: "grpc.client.attempt.rcvd_total_compressed_message_size", labels: attempt },
      { name: "grpc.client.call.duration", labels: status },
    ]);
    const [started, duration, sent, received, call] = metrics.records;
    expect(started!.value).toBe(1);
    expect(duration!.value).toBeGreaterThan(0);
    expect(sent!.value).toBe(3);
    expect(received!.value).toBe(5);
    expect(call!.value).toBeGreaterThanOrEqual(duration!.value);
  });

  it("counts every message of a stream, and ends the attempt when the stream ends", async () => {
    metrics.records.length = 0;
    const echoed: string[] = [];
    for await (const message of echoClient(transport).bidiStream(values("x", "yy"))) echoed.push(message.value);
    expect(echoed).toEqual(["a:x", "a:yy"]);
    const sizes = Object.fromEntries(
      metrics.records.filter((r) => r.name.endsWith("message_size")).map((r) => [r.name.split(".").at(-1), r.value]),
    );
    // Sent: "x" (3) + "yy" (4); received: "a:x" (5) + "a:yy" (6).
    expect(sizes).toEqual({ sent_total_compressed_message_size: 7, rcvd_total_compressed_message_size: 11 });
    expect(metrics.records.find((r) => r.name === "grpc.client.call.duration")?.labels["grpc.method"]).toBe(
      "xdskit.test.Echo/BidiStream",
    );
  });

  it("records a call that failed before any endpoint with its status and no locality", async () => {
    const other = createXdsTransport({ target: "xds:///not-there", client, metrics });
    metrics.records.length = 0;
    try {
      const error = await echoClient(other)
        .unary({ value: "x" }, { timeoutMs: 1 })
        .catch((e) => e);
      expect(error.code).toBe(Code.DeadlineExceeded);
    } finally {
      await other.close();
    }
    const duration = metrics.records.find((r) => r.name === "grpc.client.attempt.duration");
    expect(duration?.labels).toEqual({
      "grpc.method": METHOD,
      "grpc.target": "xds:///not-there",
      "grpc.status": "DEADLINE_EXCEEDED",
    });
  });
});
