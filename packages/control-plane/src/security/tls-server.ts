import * as http2 from "node:http2";
import type { ScopedLogger } from "../logger.js";
import { isLoopbackHost, type TlsCredentials } from "./tls-credentials.js";

type Serve = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

/**
 * The server's HTTP/2 listener: cleartext, or TLS with the credentials' current material (read again now: files may
 * have changed while the server was stopped). With a CA, clients are asked for a certificate; without
 * `requireClientCert` a client may present none, and one it presents that does not verify gets through the
 * handshake to be refused per stream (UNAUTHENTICATED), see docs/security.md.
 */
export function createHttp2Listener(
  tls: TlsCredentials | undefined,
  serve: Serve,
  logger: ScopedLogger,
): http2.Http2Server | http2.Http2SecureServer {
  // Node counts the writes waiting on a connection against maxSessionMemory (10 MB by default) and, past it,
  // refuses new streams or drops the connection: one large snapshot to a slow client would take its LRS stream
  // with it. What a stream may queue is bounded here instead (maxQueuedBytesPerStream), as grpc-js does.
  const options = { maxSessionMemory: Number.MAX_SAFE_INTEGER };
  if (!tls) return http2.createServer(options, serve);
  tls.reload();
  const server = http2.createSecureServer(
    {
      ...options,
      ...tls.contextOptions(),
      ALPNProtocols: ["h2"],
      requestCert: tls.mutual,
      rejectUnauthorized: tls.requireClientCert,
    },
    serve,
  );
  server.on("tlsClientError", (error, socket) =>
    logger.debug(`TLS handshake with ${socket.remoteAddress ?? "a client"} failed: ${error.message}`),
  );
  return server;
}

/** Once the listener listens: TLS files are watched; cleartext off loopback is warned about (`warned`: already was). */
export function onListening(
  server: http2.Http2Server | http2.Http2SecureServer,
  tls: TlsCredentials | undefined,
  where: { readonly host: string; readonly address: string },
  logger: ScopedLogger,
  warned: boolean,
): boolean {
  if (tls) {
    const secure = server as http2.Http2SecureServer;
    tls.watch((context) => secure.setSecureContext(context));
  } else if (!warned && !isLoopbackHost(where.host)) {
    logger.warn(
      `listening in cleartext on ${where.address}, which is not a loopback address: any client that reaches it can claim any node; give the tls option`,
    );
    warned = true;
  }
  logger.info(`listening on ${where.address}${tls ? (tls.mutual ? " (mTLS)" : " (TLS)") : ""}`);
  return warned;
}
