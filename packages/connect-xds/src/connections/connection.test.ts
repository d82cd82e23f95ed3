// One backend connection (connection.ts) over real sockets: its states from the session, a peer that is not HTTP/2
// or never answers, and closing while a call is being sent.

import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { systemClock } from "@xdskit/orca-lrs-bridge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, startBackend } from "../../test/support/backends.js";
import { echoClient } from "../../test/support/echo-client.js";
import type { ConnectivityState } from "../balancer/lb-policy.js";
import { Http2Connection } from "./connection.js";

function connection(address: string, minConnectTimeoutMs?: number) {
  const states: ConnectivityState[] = [];
  let wake: (() => void) | undefined;
  const conn = new Http2Connection({
    address,
    clock: systemClock,
    random: Math.random,
    ...(minConnectTimeoutMs === undefined ? {} : { minConnectTimeoutMs }),
    onStateChange: (state) => {
      states.push(state);
      wake?.();
    },
  });
  /** Resolves once the connection reached `state`. */
  const reach = (state: ConnectivityState) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (conn.state === state) resolve();
        else wake = check;
      };
      check();
    });
  return { conn, states, reach };
}

/** A TCP server that accepts and then writes `reply` (or nothing) and keeps the socket. */
async function rawServer(reply?: string): Promise<{ address: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    if (reply !== undefined) socket.end(reply);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A raw HTTP/2 server that never answers a stream: `onStream` does what the test needs (reset it, send GOAWAY).
 * Every session gets an 'error' listener; `close()` destroys them.
 */
async function rawHttp2Server(
  onStream: (stream: http2.ServerHttp2Stream, session: http2.ServerHttp2Session) => void,
): Promise<{ address: string; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => {});
  });
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    onStream(stream, stream.session as http2.ServerHttp2Session);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("Http2Connection", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await startBackend("a");
  });
  afterAll(async () => {
    await backend.close();
  });

  it("goes IDLE -> CONNECTING -> READY on the server's SETTINGS, and IDLE when the server goes away", async () => {
    const other = await startBackend("b");
    const { conn, states, reach } = connection(other.address);
    expect(conn.state).toBe("IDLE");
    conn.requestConnection();
    await reach("READY");
    await other.close();
    await reach("IDLE");
    expect(states).toEqual(["CONNECTING", "READY", "IDLE"]);
    conn.close();
  });

  it("fails the attempt (TRANSIENT_FAILURE, with the error) on a server that answers HTTP/1.1, without crashing", async () => {
    const server = await rawServer("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    const { conn, states, reach } = connection(server.address);
    conn.requestConnection();
    await reach("TRANSIENT_FAILURE");
    expect(states).toEqual(["CONNECTING", "TRANSIENT_FAILURE"]);
    expect(conn.lastError).toBeInstanceOf(Error);
    conn.close();
    await server.close();
  });

  it("fails the attempt after the connect deadline when the server never speaks HTTP/2", async () => {
    const server = await rawServer();
    const { conn, reach } = connection(server.address, 50);
    conn.requestConnection();
    await reach("TRANSIENT_FAILURE");
    expect(conn.lastError?.message).toBe("connect deadline exceeded");
    conn.close();
    await server.close();
  });

  it("fails a call in flight UNAVAILABLE when the server goes away before answering (not at its deadline)", async () => {
    const other = await startBackend("c");
    const { conn, reach } = connection(other.address);
    conn.requestConnection();
    await reach("READY");
    const echo = echoClient(createGrpcTransport({ baseUrl: conn.authority, sessionManager: conn }));
    const call = echo.unary({ value: "hang" }).catch((e: unknown) => e);
    while ((other.calls.get("Unary") ?? 0) === 0) await new Promise((resolve) => setImmediate(resolve));
    await other.close();
    expect(await call).toMatchObject({ code: 14 });
    conn.close();
  });

  // The interop driver's stopped backend: the stream ends (NO_ERROR, no response headers) in the tick of GOAWAY.
  // connect-node settles a call on close only for reset codes it maps to errors, so these waited for their deadline.
  it.each([
    ["after GOAWAY(NO_ERROR)", true],
    ["on a connection that stays up", false],
  ])(
    "fails a call UNAVAILABLE at once when the server closes its stream with NO_ERROR before any response %s",
    async (_, goaway) => {
      const server = await rawHttp2Server((stream, session) => {
        if (goaway) session.goaway(http2.constants.NGHTTP2_NO_ERROR);
        stream.close(http2.constants.NGHTTP2_NO_ERROR);
      });
      const { conn, reach } = connection(server.address);
      conn.requestConnection();
      await reach("READY");
      const echo = echoClient(createGrpcTransport({ baseUrl: conn.authority, sessionManager: conn }));
      // The deadline is far beyond the test's timeout: only an error at once passes.
      const error = await echo.unary({ value: "x" }, { timeoutMs: 600_000 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 14 });
      conn.close();
      await server.close();
    },
  );

  it("keeps a call the caller aborts CANCELED", async () => {
    let streams = 0;
    const server = await rawHttp2Server(() => {
      streams++;
    });
    const { conn, reach } = connection(server.address);
    conn.requestConnection();
    await reach("READY");
    const echo = echoClient(createGrpcTransport({ baseUrl: conn.authority, sessionManager: conn }));
    const abort = new AbortController();
    const call = echo.unary({ value: "x" }, { signal: abort.signal }).catch((e: unknown) => e);
    while (streams === 0) await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    expect(await call).toMatchObject({ code: 1 });
    conn.close();
    await server.close();
  });

  it("lets a call started just before close() finish (the session drains instead of refusing it)", async () => {
    const { conn, reach } = connection(backend.address);
    conn.requestConnection();
    await reach("READY");
    const echo = echoClient(createGrpcTransport({ baseUrl: conn.authority, sessionManager: conn }));
    // Both streams are opened in this tick; their HEADERS frames are not written before close().
    const calls = [echo.unary({ value: "1" }), echo.unary({ value: "2" })];
    conn.close();
    expect((await Promise.all(calls)).map((r) => r.value)).toEqual(["a:1", "a:2"]);
    // Closed: no new call is sent on it.
    await expect(echo.unary({ value: "3" })).rejects.toMatchObject({ code: 14 });
  });
});
