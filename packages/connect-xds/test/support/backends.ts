// Connect backends on 127.0.0.1, port 0: each answers with its own name so tests see which endpoint served a call.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoService, OtherService } from "./echo-service.js";
import { trailersOnlyAdapter } from "./trailers-only.js";

export interface Backend {
  readonly name: string;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly port: number;
  /** Calls served, by method name. */
  readonly calls: Map<string, number>;
  /** HTTP/2 connections (sessions) accepted so far. */
  readonly sessions: number;
  /** Resolves once `method` has been called `count` times in all (counted as each call starts). */
  served(method: string, count: number): Promise<void>;
  /** Resolves when one of its HTTP/2 sessions next closes. */
  nextSessionClose(): Promise<void>;
  /** HTTP/2 connections accepted and not yet closed. */
  readonly openSessions: number;
  /** Resolves once no accepted connection is open. */
  untilNoSessions(): Promise<void>;
  /** Ends every open connection gracefully (GOAWAY), resolving once they are closed. */
  closeSessions(): Promise<void>;
  close(): Promise<void>;
}

export interface BackendOptions {
  readonly interceptors?: Interceptor[];
  readonly routes?: (router: ConnectRouter) => void;
  /** Listen on this port (to restart a backend where it was). */
  readonly port?: number;
  /** Answer an error before any message Trailers-Only, as gRPC servers do (connect-node sends headers first). */
  readonly trailersOnly?: boolean;
  /** Called with each HTTP/2 session the server accepts. */
  readonly onSession?: (session: http2.ServerHttp2Session) => void;
  /** Serve TLS with these options (certificate, key, and for mTLS `ca` and `requestCert`). */
  readonly tls?: http2.SecureServerOptions;
}

const text = (value: string) => create(StringValueSchema, { value });

export async function startBackend(name: string, options: BackendOptions = {}): Promise<Backend> {
  const calls = new Map<string, number>();
  const waiters: { method: string; count: number; resolve: () => void }[] = [];
  const count = (method: string) => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
    for (const waiter of waiters.splice(0)) {
      if ((calls.get(waiter.method) ?? 0) >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  let sessionClosed: (() => void)[] = [];
  const adapter = options.trailersOnly === true ? trailersOnlyAdapter : connectNodeAdapter;
  const handler = adapter({
    ...(options.interceptors === undefined ? {} : { interceptors: options.interceptors }),
    routes: (router) => {
      router.service(EchoService, {
        async unary(request: { value: string }) {
          count("Unary");
          // "hang": never answer (tests that the server going away fails the call).
          if (request.value === "hang") await new Promise(() => {});
          return text(`${name}:${request.value}`);
        },
        async *serverStream(request: { value: string }) {
          count("ServerStream");
          for (let i = 0; i < 3; i++) yield text(`${name}:${request.value}:${i}`);
        },
        async clientStream(requests: AsyncIterable<{ value: string }>) {
          count("ClientStream");
          const values: string[] = [];
          for await (const request of requests) values.push(request.value);
          return text(`${name}:${values.join(",")}`);
        },
        async *bidiStream(requests: AsyncIterable<{ value: string }>) {
          count("BidiStream");
          for await (const request of requests) yield text(`${name}:${request.value}`);
        },
      } as never);
      router.service(OtherService, {
        call(request: { value: string }) {
          count("Call");
          return text(`${name}:${request.value}`);
        },
      } as never);
      options.routes?.(router);
    },
  });
  const server: http2.Http2Server | http2.Http2SecureServer =
    options.tls === undefined ? http2.createServer(handler) : http2.createSecureServer(options.tls, handler);
  // A TLS handshake a peer fails must not end the test process.
  server.on("tlsClientError", () => {});
  const sessions = new Set<http2.ServerHttp2Session>();
  let accepted = 0;
  let noSessions: (() => void)[] = [];
  server.on("session", (session) => {
    accepted++;
    sessions.add(session);
    session.on("error", () => {});
    session.on("close", () => {
      sessions.delete(session);
      const closed = sessionClosed;
      sessionClosed = [];
      for (const resolve of closed) resolve();
      if (sessions.size === 0) {
        const waiting = noSessions;
        noSessions = [];
        for (const resolve of waiting) resolve();
      }
    });
    options.onSession?.(session);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    name,
    address: `127.0.0.1:${port}`,
    port,
    calls,
    get sessions() {
      return accepted;
    },
    served: (method, wanted) =>
      (calls.get(method) ?? 0) >= wanted
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ method, count: wanted, resolve })),
    nextSessionClose: () => new Promise((resolve) => sessionClosed.push(resolve)),
    get openSessions() {
      return sessions.size;
    },
    untilNoSessions: () =>
      sessions.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => noSessions.push(resolve)),
    closeSessions() {
      for (const session of sessions) session.close();
      return sessions.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => noSessions.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
