// The injected logger: silent by default, prefixed per layer, lazy messages built only when their level is on,
// trace lines through `debug` only when asked for, and `console` usable as it is (never `console.trace`).
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Logger, LogLevel } from "../src/index.js";
import { createXdsClientWithInternals } from "../src/internal.js";
import { createFakeServer } from "./support/fake-transport.js";
import { flush, recordingWatcher } from "./support/recorder.js";
import { endpointsAny, testEndpointsType } from "./support/test-types.js";
import { createVirtualClock } from "./support/virtual-clock.js";

// The per-request line, logged at trace.
const SENDING = /\[xds-client\] \[xds server cp:1\] ADS call #\d+ sending /;

function recordingLogger(enabled?: readonly LogLevel[]): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => lines.push(`${level} ${message}`);
  return {
    lines,
    error: log("error"),
    warn: log("warn"),
    info: log("info"),
    debug: log("debug"),
    ...(enabled ? { isEnabled: (level: LogLevel) => enabled.includes(level) } : {}),
  };
}

/** Subscribes to one resource and answers with an invalid copy of it, which the client NACKs. */
async function subscribeAndNack(logger: Logger): Promise<void> {
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
  await client.close();
}

describe("logging", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("prefixes each line with its layer and logs a NACK as a warning; trace lines are not built when off", async () => {
    const logger = recordingLogger(["error", "warn", "info", "debug"]);
    await subscribeAndNack(logger);
    expect(logger.lines.some((l) => l.startsWith("warn [xds-client] [xds server cp:1] NACK"))).toBe(true);
    expect(logger.lines.some((l) => SENDING.test(l))).toBe(false);
  });

  it("writes trace lines through debug when isEnabled('trace') is true", async () => {
    const logger = recordingLogger(["trace"]);
    await subscribeAndNack(logger);
    const traced = logger.lines.filter((l) => SENDING.test(l));
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.every((l) => l.startsWith("debug "))).toBe(true);
    // Only trace is on: the NACK warning was not built.
    expect(logger.lines.some((l) => l.startsWith("warn"))).toBe(false);
  });

  it("without isEnabled, error to debug are on and trace is off", async () => {
    const logger = recordingLogger();
    await subscribeAndNack(logger);
    expect(logger.lines.some((l) => l.startsWith("warn [xds-client] [xds server cp:1] NACK"))).toBe(true);
    expect(logger.lines.some((l) => SENDING.test(l))).toBe(false);
  });

  it("takes console as it is and never calls console.trace", async () => {
    const calls: string[] = [];
    for (const level of ["error", "warn", "info", "debug", "trace", "log"] as const) {
      vi.spyOn(console, level).mockImplementation((message: unknown) => {
        calls.push(`${level} ${String(message)}`);
      });
    }
    const logger: Logger = console;
    await subscribeAndNack(logger);
    expect(calls.some((c) => c.startsWith("warn [xds-client] [xds server cp:1] NACK"))).toBe(true);
    expect(calls.some((c) => SENDING.test(c))).toBe(false);

    calls.length = 0;
    await subscribeAndNack({ ...console, isEnabled: () => true } satisfies Logger);
    expect(calls.some((c) => c.startsWith("debug ") && SENDING.test(c))).toBe(true);
    expect(calls.filter((c) => c.startsWith("trace"))).toEqual([]);
  });
});
