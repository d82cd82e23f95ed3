// The injected logger: prefixed lines, trace lines through `debug` only when asked for, and `console` usable as it
// is (never `console.trace`). Each test runs a real server and one SotW exchange over HTTP/2.
import { afterEach, describe, expect, test, vi } from "vitest";
import { CDS_TYPE_URL, createManagementServer, type Logger, type LogLevel } from "../src/index.js";
import { createHarness } from "./ads-client.js";
import { setChain, subscribe } from "./util.js";

// The per-response line, logged at trace.
const RESPONSE = /^\[control-plane\] \[ads #\d+\] response type\.googleapis\.com\/envoy\.config\.cluster\.v3\.Cluster /;

/** Starts a server with `logger`, subscribes to one cluster and ACKs it, then closes everything. */
async function exchangeOnce(logger: Logger): Promise<void> {
  const server = await createManagementServer({ logger });
  const h = createHarness(server.url);
  try {
    setChain(server);
    await subscribe(server, h, CDS_TYPE_URL, ["cluster"]);
  } finally {
    h.cleanup();
    await server.close();
  }
}

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

describe("logger", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test("without isEnabled: prefixed info lines, no trace lines", async () => {
    const logger = recordingLogger();
    await exchangeOnce(logger);
    expect(logger.lines).toContainEqual(
      expect.stringMatching(/^info \[control-plane\] listening on 127\.0\.0\.1:\d+$/),
    );
    expect(logger.lines.some((l) => RESPONSE.test(l.slice(l.indexOf(" ") + 1)))).toBe(false);
  });

  test("isEnabled('trace') sends the per-response lines to debug; a level turned off is not written", async () => {
    const logger = recordingLogger(["trace"]);
    await exchangeOnce(logger);
    const traced = logger.lines.filter((l) => RESPONSE.test(l.slice(l.indexOf(" ") + 1)));
    expect(traced.length).toBe(1);
    expect(traced[0]).toMatch(/^debug .* nonce \S+: 1 resources$/);
    expect(logger.lines.some((l) => l.startsWith("info"))).toBe(false);
  });

  test("takes console as it is and never calls console.trace", async () => {
    const calls: string[] = [];
    for (const level of ["error", "warn", "info", "debug", "trace", "log"] as const) {
      vi.spyOn(console, level).mockImplementation((message: unknown) => {
        calls.push(`${level} ${String(message)}`);
      });
    }
    const logger: Logger = console;
    await exchangeOnce(logger);
    expect(calls).toContainEqual(expect.stringMatching(/^info \[control-plane\] listening on /));

    calls.length = 0;
    await exchangeOnce({ ...console, isEnabled: () => true } satisfies Logger);
    expect(calls.some((c) => c.startsWith("debug ") && RESPONSE.test(c.slice("debug ".length)))).toBe(true);
    expect(calls.filter((c) => c.startsWith("trace"))).toEqual([]);
  });
});
