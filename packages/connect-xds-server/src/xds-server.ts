// createXdsServer wires the layers: the xDS client and its Listener watch (serving/), the Listener generations and
// their RDS resources (config/), accepted connections with their TLS (connections/), and each call's routing and
// filters in front of Connect's handler (calls/). One net.Server accepts; one HTTP/2 server (never listening itself)
// runs every connection, plaintext or TLS, each fed to it once its chain and handshake are settled.
import { createServer as createHttp2Server } from "node:http2";
import { createServer as createNetServer, type Server } from "node:net";
import type { ConnectRouterOptions } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  BootstrapError,
  type CertificateProviders,
  createCertificateProviders,
  createXdsClient,
  listenerResourceType,
  parseBootstrap,
  parseBootstrapText,
  serverListenerResourceName,
  type XdsClient,
} from "@xdskit/xds-client";
import { createCallHandler } from "./calls/call-handler.js";
import { captureRoutes } from "./calls/captured-routes.js";
import { createGrpcFastPath } from "./calls/grpc-fast-path.js";
import { createGeneration } from "./config/generation.js";
import { createRdsHolders } from "./config/rds-holders.js";
import { createAcceptor } from "./connections/acceptor.js";
import { createTlsTerminator, createTlsTerminators, type TlsTerminator } from "./connections/tls-terminators.js";
import { type ServerLogger, serverLogger } from "./logging.js";
import { defaultServerFilters } from "./routing/server-filters.js";
import { canonicalIp } from "./serving/address-match.js";
import { createListenerState, type ListenerState } from "./serving/listener-state.js";
import { createServingStatus, type ServingStatus, type ServingStatusReporter } from "./serving/serving-status.js";
import {
  DEFAULT_READ_MAX_BYTES,
  type FallbackCredentials,
  type ListenAddress,
  type XdsServer,
  type XdsServerOptions,
} from "./xds-server-types.js";

/** gRPC's default drain grace time. */
export const DEFAULT_DRAIN_GRACE_MS = 10 * 60 * 1000;
/** gRPC's minimum connect timeout: a client that has not completed the HTTP/2 handshake by then has given up. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 20_000;
/** Connections before their HTTP/2 preface held at once (docs/decisions.md#pending-connection-limit). */
export const DEFAULT_MAX_PENDING_CONNECTIONS = 1_000;

const NOT_LISTENING: ServingStatus = Object.freeze({ serving: false, reason: "not listening" });

function checkDuration(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value < min) {
    throw new RangeError(`createXdsServer: ${name} must be a number >= ${min} (got ${String(value)})`);
  }
  return value;
}

function fallbackTerminator(
  credentials: FallbackCredentials | undefined,
  logger: ServerLogger,
): TlsTerminator | undefined {
  if (credentials === undefined || credentials.type === "insecure") return undefined;
  if (credentials.type !== "tls") {
    throw new TypeError(`createXdsServer: fallbackCredentials.type must be "insecure" or "tls"`);
  }
  const requestCert = credentials.caPem !== undefined;
  try {
    return createTlsTerminator(
      {
        cert: credentials.certChainPem,
        key: credentials.privateKeyPem,
        ...(credentials.caPem === undefined ? {} : { ca: credentials.caPem }),
      },
      requestCert,
      requestCert && credentials.requireClientCertificate !== false,
      logger,
    );
  } catch (error) {
    throw new TypeError(
      `createXdsServer: fallbackCredentials do not make a TLS context: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** The client to watch with: the one given, or one made from the bootstrap (checked for the template first). */
function clientFor(options: XdsServerOptions): { client: XdsClient; owned: boolean } {
  if (options.client !== undefined) {
    if (options.bootstrap !== undefined) throw new TypeError("createXdsServer: give bootstrap or client, not both");
    if (options.client.bootstrap.serverListenerResourceNameTemplate === undefined) {
      throw new BootstrapError([
        "server_listener_resource_name_template: is required for an xDS-enabled server (A36: it has no default)",
      ]);
    }
    return { client: options.client, owned: false };
  }
  if (options.bootstrap !== undefined) {
    const bootstrap =
      typeof options.bootstrap === "string" ? parseBootstrapText(options.bootstrap) : parseBootstrap(options.bootstrap);
    if (bootstrap.serverListenerResourceNameTemplate === undefined) {
      throw new BootstrapError([
        "server_listener_resource_name_template: is required for an xDS-enabled server (A36: it has no default)",
      ]);
    }
  }
  const client = createXdsClient({
    ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  if (client.bootstrap.serverListenerResourceNameTemplate === undefined) {
    void client.close();
    throw new BootstrapError([
      "server_listener_resource_name_template: is required for an xDS-enabled server (A36: it has no default)",
    ]);
  }
  return { client, owned: true };
}

export function createXdsServer(options: XdsServerOptions): XdsServer {
  if (typeof options?.routes !== "function") throw new TypeError("createXdsServer: routes must be a function");
  const drainGraceMs = checkDuration("drainGraceMs", options.drainGraceMs, DEFAULT_DRAIN_GRACE_MS, 0);
  const handshakeTimeoutMs = checkDuration(
    "handshakeTimeoutMs",
    options.handshakeTimeoutMs,
    DEFAULT_HANDSHAKE_TIMEOUT_MS,
    1,
  );
  const maxPendingConnections = options.maxPendingConnections ?? DEFAULT_MAX_PENDING_CONNECTIONS;
  if (
    !(Number.isInteger(maxPendingConnections) || maxPendingConnections === Number.POSITIVE_INFINITY) ||
    maxPendingConnections < 1
  ) {
    throw new RangeError(
      `createXdsServer: maxPendingConnections must be an integer >= 1 or Infinity (got ${String(maxPendingConnections)})`,
    );
  }
  const logger = serverLogger(options.logger, "[connect-xds-server]");
  const fallbackTls = fallbackTerminator(options.fallbackCredentials, logger);
  const { client, owned } = clientFor(options);
  const bootstrap = client.bootstrap;

  let providers: CertificateProviders | undefined;
  const tls = createTlsTerminators(() => {
    providers ??= createCertificateProviders(bootstrap, options.logger === undefined ? {} : { logger: options.logger });
    return providers;
  }, logger);
  const holders = createRdsHolders({ client, logger });
  const http2Server = createHttp2Server();
  let state: ListenerState | undefined;
  const acceptor = createAcceptor({
    activeGeneration: () => state?.active(),
    http2Server,
    tls,
    fallbackTls,
    handshakeTimeoutMs,
    maxPendingConnections,
    logger,
  });
  const captured = captureRoutes(options.routes);
  // gRPC's receive limit unless the application sets one (connect-node's own is 4 GiB; docs/limits.md).
  const connectOptions: ConnectRouterOptions = {
    ...options.connectOptions,
    readMaxBytes: options.connectOptions?.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
  };
  const service = connectNodeAdapter({ ...connectOptions, routes: captured.routes });
  http2Server.on(
    "stream",
    createCallHandler({
      contextOf: acceptor.contextOf,
      service,
      fastPath:
        options.leanGrpc === false
          ? undefined
          : createGrpcFastPath({
              methods: captured.methods,
              handlers: captured.handlers,
              connectOptions,
            }),
      onServiceError: (error) =>
        logger.debug(
          () => `a request failed before its service: ${error instanceof Error ? error.message : String(error)}`,
        ),
      onStreamError: (error) => logger.debug(() => `a call's stream failed: ${error.message}`),
    }),
  );
  const netServer: Server = createNetServer(acceptor.accept);
  netServer.on("error", (error) => logger.error(`listening socket: ${error.message}`));

  let status: ServingStatusReporter | undefined;
  let listening: ListenAddress | undefined;
  let resourceName: string | undefined;
  let cancelWatch: (() => void) | undefined;
  let phase: "new" | "listening" | "closed" = "new";

  async function bind(address: ListenAddress): Promise<ListenAddress> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        reject(
          new Error(`cannot listen on ${address.host}:${address.port}: ${error.code ?? ""} ${error.message}`.trim(), {
            cause: error,
          }),
        );
      };
      netServer.once("error", onError);
      netServer.listen({ host: address.host, port: address.port, exclusive: true }, () => {
        netServer.off("error", onError);
        resolve();
      });
    });
    const bound = netServer.address();
    if (bound === null || typeof bound === "string") throw new Error("the listening socket has no TCP address");
    return { host: canonicalIp(bound.address) ?? bound.address, port: bound.port };
  }

  return {
    async listen(address) {
      if (phase !== "new")
        throw new Error(`listen: the server is ${phase === "closed" ? "closed" : "already listening"}`);
      const host = typeof address?.host === "string" ? canonicalIp(address.host) : undefined;
      if (host === undefined) {
        throw new TypeError(
          `listen: host must be an IP address (the Listener's name holds it), got ${String(address?.host)}`,
        );
      }
      if (!Number.isInteger(address.port) || address.port < 0 || address.port > 65535) {
        throw new RangeError(`listen: port must be an integer from 0 to 65535, got ${String(address.port)}`);
      }
      phase = "listening";
      try {
        listening = await bind({ host, port: address.port });
      } catch (error) {
        phase = "new";
        throw error;
      }
      resourceName = serverListenerResourceName(bootstrap, listening);
      status = createServingStatus(`waiting for Listener ${resourceName}`, options.onServingStatus, logger);
      const nodeId = bootstrap.node.id;
      state = createListenerState({
        resourceName,
        listening,
        drainGraceMs,
        status,
        logger,
        createGeneration: (listener) =>
          createGeneration({ listener, holders, registry: defaultServerFilters, nodeId, random: Math.random, logger }),
      });
      cancelWatch = client.watch(listenerResourceType, resourceName, state.watcher);
      return listening;
    },
    address: () => listening,
    servingStatus: (): ServingStatus => status?.current ?? NOT_LISTENING,
    get listenerResourceName() {
      return resourceName;
    },
    async close(closeOptions) {
      if (phase === "closed") return;
      phase = "closed";
      const graceMs = checkDuration("close graceMs", closeOptions?.graceMs, 0, 0);
      cancelWatch?.();
      state?.close(graceMs);
      const stopped = new Promise<void>((resolve) => {
        if (!netServer.listening) resolve();
        else netServer.close(() => resolve());
      });
      await acceptor.closeAll(graceMs);
      await stopped;
      holders.close();
      tls.close();
      providers?.close();
      http2Server.close();
      if (owned) await client.close();
    },
  };
}
