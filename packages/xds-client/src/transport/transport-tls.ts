// TLS for the default transport: the bootstrap's `tls` channel credentials read when a connection is made (not when
// the transport is created: a missing file is a connection error, and a rotated file is used by the next
// connection), and TLS failures put in words that name TLS and the cause.
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { ChannelCredentialsConfig } from "../bootstrap/bootstrap-types.js";

type TlsCredentials = Extract<ChannelCredentialsConfig, { type: "tls" }>;

/** A credential file that cannot be read: the connection fails with this, naming the file. */
export class TlsCredentialsError extends Error {
  override readonly name = "TlsCredentialsError";
}

function read(field: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TlsCredentialsError(`cannot read the ${field} ${file}: ${reason}`);
  }
}

/**
 * The TLS options of one connection: the files of `credentials`, read now (gRPC's file-watcher certificate provider
 * re-reads them too, so a rotated certificate takes effect on the next connection). Throws TlsCredentialsError.
 * Without a CA file the system roots are used.
 */
export function readTlsCredentials(credentials: TlsCredentials): ConnectionOptions {
  return {
    ...(credentials.caCertificateFile === undefined
      ? {}
      : { ca: read("ca_certificate_file", credentials.caCertificateFile) }),
    ...(credentials.certificateFile === undefined
      ? {}
      : { cert: read("certificate_file", credentials.certificateFile) }),
    ...(credentials.privateKeyFile === undefined ? {} : { key: read("private_key_file", credentials.privateKeyFile) }),
  };
}

/** Certificate checks of the server by this client (Node's codes for them). */
const SERVER_NOT_TRUSTED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_REJECTED",
  "INVALID_CA",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** What OpenSSL says, without its location noise (`…:SSL routines:func:reason:file:line:`). */
function opensslReason(message: string): string {
  const match = /SSL routines:[^:]*:([^:]+)/.exec(message);
  return match?.[1]?.trim() ?? message;
}

/**
 * Why a TLS connection failed, in words, or undefined when `error` is not about TLS (a refused TCP connection, a
 * reset after the handshake). `handshakeDone`: the client had finished its side of the handshake (with TLS 1.3 the
 * server checks the client's certificate after that, and its refusal arrives as an alert).
 */
export function describeTlsFailure(error: unknown, handshakeDone: boolean): string | undefined {
  if (error instanceof TlsCredentialsError) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === "string" && SERVER_NOT_TRUSTED.has(code)) {
    return `the server's certificate is not trusted: ${message}`;
  }
  if (typeof code === "string" && code.startsWith("ERR_SSL_")) {
    const reason = opensslReason(message);
    if (code === "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED" || code === "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE") {
      return `${reason}: the server requires a client certificate (certificate_file and private_key_file)`;
    }
    if (/ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|DECRYPT_ERROR)$/.test(code)) {
      return `${reason}: the server rejected the client certificate`;
    }
    return reason;
  }
  if (
    !handshakeDone &&
    (code === "ECONNRESET" || code === "EPIPE" || /socket disconnected before secure/.test(message))
  ) {
    return `the connection closed during the handshake (${message})`;
  }
  return undefined;
}

/** Why a TLS connection failed, and the error that said so. */
export interface TlsFailure {
  readonly reason: string;
  readonly cause: unknown;
}

/** Dials TLS connections and remembers how the latest one failed, if it did. */
export interface TlsDialer {
  /** Dials a connection (for HTTP/2's `createConnection`); throws what `dial` throws. */
  createConnection(): Socket;
  /**
   * Why the latest connection failed at the TLS level. `http2Established`: the stream asking saw the server's HTTP/2
   * preface (then a close after the handshake is not the server refusing the client's certificate).
   */
  failure(http2Established: boolean): TlsFailure | undefined;
}

/**
 * A dialer watching each connection's TLS socket. Its listeners are registered before HTTP/2's own, so the reason
 * is known by the time the streams fail. With TLS 1.3 the server checks the client's certificate after the client is
 * done with the handshake: it answers a missing one with an alert (an error here), but Node's server simply closes a
 * connection whose certificate did not verify, which the client sees as a close right after the handshake.
 */
export function createTlsDialer(dial: () => Socket, presentsCertificate: boolean): TlsDialer {
  let latest: { failure: TlsFailure | undefined; handshakeDone: boolean; closedAfterHandshake: boolean } | undefined;
  return {
    createConnection() {
      const connection = {
        failure: undefined as TlsFailure | undefined,
        handshakeDone: false,
        closedAfterHandshake: false,
      };
      latest = connection;
      let socket: Socket;
      try {
        socket = dial();
      } catch (error) {
        const reason = describeTlsFailure(error, false);
        if (reason !== undefined) connection.failure = { reason, cause: error };
        throw error;
      }
      socket.once("secureConnect", () => {
        connection.handshakeDone = true;
      });
      socket.on("error", (error) => {
        const reason = describeTlsFailure(error, connection.handshakeDone);
        if (reason !== undefined) connection.failure ??= { reason, cause: error };
      });
      socket.once("end", () => {
        if (connection.handshakeDone) connection.closedAfterHandshake = true;
      });
      return socket;
    },
    failure(http2Established) {
      if (latest?.failure) return latest.failure;
      if (!latest?.closedAfterHandshake || http2Established) return undefined;
      return {
        reason: presentsCertificate
          ? "the server closed the connection right after the handshake: it did not accept the client certificate"
          : "the server closed the connection right after the handshake",
        cause: undefined,
      };
    },
  };
}
