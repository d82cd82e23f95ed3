// Keepalive (A8) and idleness (A9) of backend connections over real HTTP/2. Keepalive: a peer that never
// acknowledges a PING loses its connection, and its call fails UNAVAILABLE saying why; a server that acknowledges
// gets PINGs and keeps serving; GOAWAY "too_many_pings" doubles the keepalive time. Idleness: the idle timer runs
// only while no call is in flight; when it fires, the connection closes and the next call opens a new one. Timers
// the test must control come from a clock that keeps them for the test to fire; the rest run on the system clock.
import * as http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { type Clock, systemClock } from "@xdskit/orca-lrs-bridge";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { XdsTransport, XdsTransportOptions } from "../src/index.js";
import { createXdsTransportWithInternals, type XdsTransportInternals } from "../src/internal.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { type FrameServer, startFrameServer } from "./support/frame-server.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

/** The system clock, except timers of `held` ms: kept until the test fires them (or they are cleared). */
function clockHolding(held?: number) {
  const pending = new Set<{ callback: () => void }>();
  const asked: number[] = [];
  const clock: Clock = {
    now: systemClock.now,
    setTimeout: (callback, ms) => {
      asked.push(ms);
      if (ms !== held) return systemClock.setTimeout(callback, ms);
      const timer = { callback };
      pending.add(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      if (pending.delete(handle as { callback: () => void })) return;
      systemClock.clearTimeout(handle);
    },
  };
  return {
    clock,
    /** Every ms value asked for, in order. */
    asked,
    get pending() {
      return pending.size;
    },
    fire() {
      const timers = [...pending];
      pending.clear();
      for (const timer of timers) timer.callback();
    },
  };
}

describe("keepalive and idleness of backend connections", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let transport: XdsTransport | undefined;
  let closeLater: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    await Promise.all(closeLater.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });
  closeLater = [];

  function serve(
    name: string,
    address: string,
    options: Partial<XdsTransportOptions>,
    internals: XdsTransportInternals,
  ) {
    server.setSnapshot(simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: [address] }]));
    transport = createXdsTransportWithInternals({ target: `xds:///${name}`, client, ...options }, internals);
    return echoClient(transport);
  }

  it("fails a call UNAVAILABLE when the connection's PING goes unanswered, naming keepalive", async () => {
    const peer: FrameServer = await startFrameServer(); // answers SETTINGS, never a PING, never the call
    closeLater.push(() => peer.close());
    const echo = serve(
      "keepalive-dead",
      peer.address,
      { keepaliveTimeMs: 20, keepaliveTimeoutMs: 30 },
      { minKeepaliveTimeMs: 1 },
    );
    const error = await echo.unary({ value: "x" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.Unavailable);
    expect(error?.rawMessage).toBe(
      `the connection to ${peer.address} ended before the call did (keepalive PING not acknowledged within 30 ms)`,
    );
  });

  it("pings a server that answers while a call is in flight, and the call completes", async () => {
    const pings: number[] = [];
    let sawPing: () => void = () => {};
    const pinged = new Promise<void>((resolve) => {
      sawPing = resolve;
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const backend: Backend = await startBackend("k", {
      interceptors: [
        (next) => async (req) => {
          await gate;
          return next(req);
        },
      ],
      onSession: (session) =>
        session.on("ping", () => {
          pings.push(1);
          sawPing();
        }),
    });
    closeLater.push(() => backend.close());
    const echo = serve("keepalive-live", backend.address, { keepaliveTimeMs: 20 }, { minKeepaliveTimeMs: 1 });
    const call = echo.unary({ value: "x" });
    await pinged;
    release();
    expect((await call).value).toBe("k:x");
    expect(pings.length).toBeGreaterThan(0);
  });

  it("doubles the keepalive time after GOAWAY ENHANCE_YOUR_CALM too_many_pings", async () => {
    let sessions = 0;
    let second: () => void = () => {};
    const reconnected = new Promise<void>((resolve) => {
      second = resolve;
    });
    const backend = await startBackend("calm", {
      onSession: (session) => {
        if (++sessions === 2) second();
        session.once("ping", () =>
          session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from("too_many_pings")),
        );
      },
    });
    closeLater.push(() => backend.close());
    const timers = clockHolding();
    const echo = serve(
      "keepalive-calm",
      backend.address,
      { keepaliveTimeMs: 25, keepalivePermitWithoutCalls: true },
      { minKeepaliveTimeMs: 1, clock: timers.clock },
    );
    expect((await echo.unary({ value: "x" })).value).toBe("calm:x");
    // The GOAWAY after the first PING ends the first connection; round_robin opens the second at once, and a call
    // on it finds its keepalive running, every 50 ms.
    await reconnected;
    expect((await echo.unary({ value: "y" })).value).toBe("calm:y");
    const keepaliveTimers = timers.asked.filter((ms) => ms === 25 || ms === 50);
    expect(keepaliveTimers[0]).toBe(25);
    expect(keepaliveTimers.at(-1)).toBe(50);
  });

  it("closes an idle transport's connections after idleTimeoutMs without calls, and reconnects for the next call", async () => {
    const IDLE_MS = 4321;
    const backend = await startBackend("idle");
    closeLater.push(() => backend.close());
    const timers = clockHolding(IDLE_MS);
    const echo = serve("idle", backend.address, { idleTimeoutMs: IDLE_MS }, { clock: timers.clock });
    expect((await echo.unary({ value: "x" })).value).toBe("idle:x");
    expect(backend.sessions).toBe(1);
    // While a call is in flight no idle timer runs.
    const hanging = echo.unary({ value: "hang" });
    hanging.catch(() => {});
    await backend.served("Unary", 2);
    expect(timers.pending).toBe(0);
    await transport?.close();
    // A fresh transport: no call in flight, the idle timer runs; when it fires the connection closes.
    const again = serve("idle", backend.address, { idleTimeoutMs: IDLE_MS }, { clock: timers.clock });
    expect((await again.unary({ value: "y" })).value).toBe("idle:y");
    const sessionsBefore = backend.sessions;
    expect(timers.pending).toBe(1);
    const closed = backend.nextSessionClose();
    timers.fire();
    await closed;
    expect((await again.unary({ value: "z" })).value).toBe("idle:z");
    expect(backend.sessions).toBe(sessionsBefore + 1);
  });

  it("refuses a keepalive or idle timeout that is not a positive number", () => {
    expect(() => createXdsTransportWithInternals({ target: "xds:///x", client, keepaliveTimeMs: 0 }, {})).toThrow(
      "keepaliveTimeMs must be a positive number of milliseconds, not 0",
    );
    expect(() => createXdsTransportWithInternals({ target: "xds:///x", client, idleTimeoutMs: -1 }, {})).toThrow(
      "idleTimeoutMs must be a positive number of milliseconds or Infinity, not -1",
    );
  });
});
