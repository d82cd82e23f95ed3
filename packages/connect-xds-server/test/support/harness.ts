// A control plane, an xDS-enabled server listening on loopback port 0 with the echo service, and what tests read:
// the serving states it reported, awaited by event rather than by time.
import { connect as netConnect } from "node:net";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import type { BootstrapConfig, Logger } from "@xdskit/xds-client";
import { createXdsServer, type ServingStatus, type XdsServer, type XdsServerOptions } from "../../src/index.js";
import { type EchoRoutes, echoRoutes } from "./echo-service.js";
import { LISTENER_TEMPLATE } from "./server-listener.js";

export const NODE_ID = "connect-xds-server-test";

export interface FileWatcherInit {
  readonly certificate_file?: string;
  readonly private_key_file?: string;
  readonly ca_certificate_file?: string;
  readonly refresh_interval?: string;
}

export interface BootstrapInit {
  readonly certificateProviders?: Record<string, FileWatcherInit>;
  /** `server_features: ["fail_on_data_errors"]`: A88's switch that makes a deleted resource not exist. */
  readonly failOnDataErrors?: boolean;
}

export function serverBootstrap(controlPlane: ManagementServer, init: BootstrapInit = {}): BootstrapConfig {
  const certificateProviders = init.certificateProviders ?? {};
  return {
    xds_servers: [
      {
        server_uri: controlPlane.address,
        channel_creds: [{ type: "insecure" }],
        ...(init.failOnDataErrors ? { server_features: ["fail_on_data_errors"] } : {}),
      },
    ],
    node: { id: NODE_ID },
    server_listener_resource_name_template: LISTENER_TEMPLATE,
    certificate_providers: Object.fromEntries(
      Object.entries(certificateProviders).map(([name, config]) => [name, { plugin_name: "file_watcher", config }]),
    ),
  } as unknown as BootstrapConfig;
}

/** The serving states a server reported, in order, and a way to wait for the next one that satisfies a test. */
export interface StatusLog {
  readonly all: ServingStatus[];
  readonly callback: (status: ServingStatus) => void;
  /** Resolves with the first status (already reported from index `from`, or later) that satisfies `predicate`. */
  until(predicate: (status: ServingStatus) => boolean, from?: number): Promise<ServingStatus>;
}

export function statusLog(): StatusLog {
  const all: ServingStatus[] = [];
  const waiters: { from: number; predicate: (s: ServingStatus) => boolean; resolve: (s: ServingStatus) => void }[] = [];
  return {
    all,
    callback(status) {
      all.push(status);
      for (const waiter of [...waiters]) {
        if (all.length - 1 >= waiter.from && waiter.predicate(status)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(status);
        }
      }
    },
    until(predicate, from = 0) {
      const found = all.slice(from).find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ from, predicate, resolve }));
    },
  };
}

export const serving = (status: ServingStatus) => status.serving;
export const notServing = (status: ServingStatus) => !status.serving;

export interface StartedServer {
  readonly server: XdsServer;
  readonly echo: EchoRoutes;
  readonly statuses: StatusLog;
  readonly host: string;
  readonly port: number;
  /** The Listener resource name it watches. */
  readonly name: string;
}

export interface StartOptions extends Partial<XdsServerOptions>, BootstrapInit {
  readonly host?: string;
  readonly port?: number;
  /** Give the server no `onServingStatus` (then `statuses` stays empty and the server logs its transitions). */
  readonly withoutStatusCallback?: boolean;
}

export async function startServer(controlPlane: ManagementServer, options: StartOptions = {}): Promise<StartedServer> {
  const echo = echoRoutes();
  const statuses = statusLog();
  const {
    host = "127.0.0.1",
    port = 0,
    certificateProviders,
    failOnDataErrors,
    withoutStatusCallback,
    ...rest
  } = options;
  const server = createXdsServer({
    routes: echo.routes,
    ...(rest.client === undefined
      ? {
          bootstrap: serverBootstrap(controlPlane, {
            ...(certificateProviders === undefined ? {} : { certificateProviders }),
            ...(failOnDataErrors === undefined ? {} : { failOnDataErrors }),
          }),
        }
      : {}),
    ...(withoutStatusCallback ? {} : { onServingStatus: statuses.callback }),
    ...rest,
  });
  const bound = await server.listen({ host, port });
  return { server, echo, statuses, host: bound.host, port: bound.port, name: server.listenerResourceName ?? "" };
}

export async function startControlPlane(): Promise<ManagementServer> {
  return createManagementServer();
}

export interface CountedTransport {
  readonly transport: Transport;
  /** TCP connections the transport has opened. */
  readonly connections: () => number;
}

/**
 * A gRPC transport over cleartext HTTP/2 to host:port that counts its TCP connections. The `:authority` is
 * `localhost:<port>` (Node's HTTP/2 client writes an IPv6 authority without brackets, which no server can parse).
 */
export function plaintextTransport(
  host: string,
  port: number,
  options: { readonly localAddress?: string } = {},
): CountedTransport {
  let connections = 0;
  const transport = createGrpcTransport({
    baseUrl: `http://localhost:${port}`,
    nodeOptions: {
      createConnection: () => {
        connections++;
        return netConnect({ host, port, ...options });
      },
    },
  });
  return { transport, connections: () => connections };
}

/** A logger that keeps every line, for tests that check what was logged, and waits for a line by its text. */
export interface MemoryLogger extends Logger {
  readonly lines: string[];
  /** Resolves with the first line from index `from` (default 0: already logged, or later) that contains `text`. */
  waitFor(text: string, from?: number): Promise<string>;
}

export function memoryLogger(): MemoryLogger {
  const lines: string[] = [];
  const waiters: { text: string; resolve: (line: string) => void }[] = [];
  const keep = (level: string) => (message: string) => {
    const line = `${level} ${message}`;
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (!line.includes(waiter.text)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  };
  return {
    lines,
    error: keep("error"),
    warn: keep("warn"),
    info: keep("info"),
    debug: keep("debug"),
    waitFor(text, from = 0) {
      const found = lines.slice(from).find((line) => line.includes(text));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ text, resolve }));
    },
  };
}
