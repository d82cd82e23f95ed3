// The injected logger: silent by default, prefixed per layer, and lazy messages built only when their level is on.
import { describe, expect, it } from "vitest";
import type { Logger, LogLevel } from "../src/index.js";
import { createXdsClientWithInternals } from "../src/internal.js";
import { createFakeServer } from "./support/fake-transport.js";
import { flush, recordingWatcher } from "./support/recorder.js";
import { endpointsAny, testEndpointsType } from "./support/test-types.js";
import { createVirtualClock } from "./support/virtual-clock.js";

function recordingLogger(enabled: readonly LogLevel[]): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: LogLevel) => (message: string) => lines.push(`${level} ${message}`);
  return {
    lines,
    error: log("error"),
    warn: log("warn"),
    info: log("info"),
    debug: log("debug"),
    trace: log("trace"),
    isEnabled: (level) => enabled.includes(level),
  };
}

describe("logging", () => {
  it("prefixes each line with its layer and logs a NACK as a warning", async () => {
    const logger = recordingLogger(["error", "warn", "info"]);
    const server = createFakeServer();
    const client = createXdsClientWithInternals(
      {
        bootstrap: { xds_servers: [{ server_uri: "cp:1", channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
        env: {},
        transportFactory: server.transportFactory,
        logger,
      },
      { clock: createVirtualClock(), random: () => 0.5 },
    );
    client.watch(testEndpointsType, "badA", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({
      typeUrl: testEndpointsType.typeUrl,
      versionInfo: "1",
      nonce: "n1",
      resources: [endpointsAny("badA")],
    });
    await flush();
    expect(logger.lines.some((l) => l.startsWith("warn [xds-client] [xds server cp:1] NACK"))).toBe(true);
    // trace is off: the per-request trace lines were never built.
    expect(logger.lines.some((l) => l.startsWith("trace"))).toBe(false);
    await client.close();
  });

  it("builds lazy trace messages when trace is on", async () => {
    const logger = recordingLogger(["trace", "debug"]);
    const server = createFakeServer();
    const client = createXdsClientWithInternals(
      {
        bootstrap: { xds_servers: [{ server_uri: "cp:1", channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
        env: {},
        transportFactory: server.transportFactory,
        logger,
      },
      { clock: createVirtualClock(), random: () => 0.5 },
    );
    client.watch(testEndpointsType, "A", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    expect(
      logger.lines.some(
        (l) => l.startsWith("trace [xds-client] [xds server cp:1] ADS call #") && l.includes("names=1"),
      ),
    ).toBe(true);
    await client.close();
  });
});
