// The default transport's implementation: gRPC over HTTP/2 on @connectrpc/connect-node's HTTP/2 client, each ADS
// stream's framing and messages read here (grpc-stream.ts, response-reader.ts). Loaded only when a client
// opens its first stream with the default transport (transport.ts), so importing and creating a client does not load
// Connect, connect-node or node:http2.
import type * as http2 from "node:http2";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createMethodUrl, createWritableIterable } from "@connectrpc/connect/protocol";
import { createNodeHttpClient, Http2SessionManager } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DeltaResponseBytes } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import type { SotwResponseBytes } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import { serverEndpoint } from "../bootstrap/server-target.js";
import { openGrpcStream } from "./grpc-stream.js";
import { readDeltaResponse, readSotwResponse } from "./response-reader.js";
import { withEncodedNames } from "./sotw-request-bytes.js";
import { createTlsDialer, readTlsCredentials } from "./transport-tls.js";
import type { DeltaResponseRanges, SotwResponseRanges, XdsStream, XdsTransportFactory } from "./transport-types.js";

/** How long a stream must stay open on an established connection for its address to count as working. */
const HEALTHY_STREAM_MS = 1000;

/**
 * The HTTP/2 receive window of each stream and of the connection (docs/limits.md#client): how much a server may send
 * before the client has read it. HTTP/2's default, 64 KiB, makes a response of 1 MB wait for about 15 window updates,
 * each a round trip between the two event loops; gRPC's own clients grow their windows to 16 MiB (BDP probing) or
 * start at 1 MiB.
 */
const RECEIVE_WINDOW_BYTES = 8 << 20;

/** The 'error' listener every session, stream and socket of this transport carries for its whole life. */
const ignoreError = (): void => {};

/**
 * connect-node's session manager, watching which HTTP/2 sessions completed their handshake: a session counts once the
 * server's SETTINGS frame or the answer to a PING arrived (a server that accepts TCP and never speaks HTTP/2 gives
 * neither). Streams opened on it wait for the first session a request uses after they were opened.
 *
 * It also keeps an 'error' listener on every session for the rest of its life. connect-node removes its own listeners
 * when a session leaves its "ready" state, which can happen between the session's destruction with an error and
 * Node emitting that error (a server answering HTTP/1.1, docs/decisions.md#non-http2-servers): without a listener
 * left, the emit would be an uncaught exception. The errors themselves reach the streams, which report them. A
 * session gets ours with its first stream: before that, connect-node's connecting-state listener is in place, and it
 * is only removed on 'connect' (the request follows within the same tick's microtasks) or on an abort, which either
 * destroys the session without an error or comes after Node's next-tick emit of a connect-time error.
 */
class HandshakeAwareSessionManager extends Http2SessionManager {
  private readonly handshakes = new WeakMap<http2.ClientHttp2Session, Promise<void>>();
  private readonly guarded = new WeakSet<http2.ClientHttp2Session>();
  private waiting: ((session: http2.ClientHttp2Session) => void)[] = [];

  override async request(...args: Parameters<Http2SessionManager["request"]>): Promise<http2.ClientHttp2Stream> {
    const stream = await super.request(...args);
    stream.on("error", ignoreError);
    const session = stream.session as http2.ClientHttp2Session | undefined;
    if (session !== undefined && !this.guarded.has(session)) {
      this.guarded.add(session);
      session.on("error", ignoreError);
      // The connection's window (each stream's is in the SETTINGS the session opened with). Set before any response
      // to this first request can have arrived.
      try {
        session.setLocalWindowSize(RECEIVE_WINDOW_BYTES);
      } catch {
        // A session already destroyed: the stream on it fails and reports why.
      }
    }
    const waiting = this.waiting;
    this.waiting = [];
    if (session !== undefined) for (const notify of waiting) notify(session);
    return stream;
  }

  /** Resolves once a request made after this call runs on a session whose handshake completed. */
  established(): Promise<void> {
    return new Promise<http2.ClientHttp2Session>((resolve) => this.waiting.push(resolve)).then((s) =>
      this.handshake(s),
    );
  }

  private handshake(session: http2.ClientHttp2Session): Promise<void> {
    let done = this.handshakes.get(session);
    if (!done) {
      done = new Promise<void>((resolve) => {
        session.once("remoteSettings", () => resolve());
        try {
          // Answered only after the server's own preface, so it also covers settings received before we looked.
          session.ping((error) => {
            if (!error) resolve();
          });
        } catch {
          // A closed session: the stream on it fails and reports why.
        }
      });
      this.handshakes.set(session, done);
    }
    return done;
  }
}

/**
 * The default transport: gRPC over HTTP/2 with connect-node, one HTTP/2 connection per server. Creating it does no
 * I/O and never throws: TLS files are read for each connection, and what goes wrong there fails the streams.
 * - TLS failures fail the streams with UNAVAILABLE and a message naming TLS and the cause.
 * - A stream cancelled before its connection finished the HTTP/2 handshake (the connect deadline,
 *   docs/decisions.md#connect-deadline) takes that connection with it, so the next stream dials afresh instead of
 *   waiting on the same silent server.
 */
export const createHttp2Transport: XdsTransportFactory = (server, options) => {
  const creds = server.channelCredentials;
  const tls = creds.type === "tls" ? () => readTlsCredentials(creds) : undefined;
  const endpoint = serverEndpoint(server.serverUri, tls);
  const { baseUrl, sessionOptions } = endpoint;
  /**
   * Addresses that failed a stream in a row (a server named by several addresses: replicas). A stream that got a
   * response, or that stayed open on an established connection for HEALTHY_STREAM_MS, shows its address works: a
   * delta stream resubscribing with the versions it holds is sent nothing when nothing changed, and its replica's
   * later death must move the client on as the first did, not count as one more failure in a row.
   */
  let failedAddresses = 0;
  const dial = sessionOptions.createConnection;
  const dialer =
    tls !== undefined ? createTlsDialer(dial, creds.type === "tls" && creds.certificateFile !== undefined) : undefined;
  const createConnection = dialer?.createConnection ?? (() => dial().on("error", ignoreError));
  const sessionManager = new HandshakeAwareSessionManager(
    baseUrl,
    { pingIntervalMs: 60_000, pingTimeoutMs: 20_000, pingIdleConnection: false },
    {
      ...sessionOptions,
      createConnection,
      settings: { initialWindowSize: RECEIVE_WINDOW_BYTES },
    },
  );
  const client = createNodeHttpClient({ httpVersion: "2", sessionProvider: () => sessionManager });
  const readMaxBytes = options.maxReceiveMessageBytes;
  // SotW responses read as SotwResponseRanges (or SotwResponseBytes), delta responses as DeltaResponseRanges (or
  // DeltaResponseBytes): each
  // resource kept as the bytes it arrived as (docs/architecture.md#the-byte-identical-skip,
  // docs/architecture.md#the-delta-envelope), read by response-reader.ts.
  const sotwUrl = createMethodUrl(baseUrl, AggregatedDiscoveryService.method.streamAggregatedResources);
  const deltaUrl = createMethodUrl(baseUrl, AggregatedDiscoveryService.method.deltaAggregatedResources);
  const encodeSotw = (request: DiscoveryRequest) => toBinary(DiscoveryRequestSchema, withEncodedNames(request));
  const encodeDelta = (request: DeltaDiscoveryRequest) => toBinary(DeltaDiscoveryRequestSchema, request);

  /** A stream's failure, as a TLS failure when its connection failed at the TLS level. */
  const explain = (error: unknown, http2Established: boolean): unknown => {
    const failure = dialer?.failure(http2Established);
    if (failure === undefined) return error;
    const message = `TLS handshake with xDS server ${server.serverUri} failed: ${failure.reason}`;
    return new ConnectError(message, Code.Unavailable, undefined, undefined, failure.cause ?? error);
  };

  function open<Req, Res>(start: (input: AsyncIterable<Req>, signal: AbortSignal) => AsyncIterator<Res>) {
    const requests = createWritableIterable<Req>();
    const abort = new AbortController();
    let isEstablished = false;
    let establishedAt = 0;
    const established = sessionManager.established().then(() => {
      isEstablished = true;
      establishedAt = performance.now();
    });
    const ended = () => {
      if (isEstablished && performance.now() - establishedAt >= HEALTHY_STREAM_MS) failedAddresses = 0;
    };
    const responses = start(requests, abort.signal);
    let cancelled = false;
    const stream: XdsStream<Req, Res> = {
      send: (request) => requests.write(request),
      responses: {
        next: () =>
          responses.next().then(
            (result) => {
              if (!result.done) failedAddresses = 0;
              else ended();
              return result;
            },
            (error: unknown) => {
              ended();
              throw cancelled ? error : explain(error, isEstablished);
            },
          ),
      },
      established,
      cancel: () => {
        cancelled = true;
        requests.close();
        abort.abort();
        if (!isEstablished) sessionManager.abort();
      },
    };
    return stream;
  }

  return {
    streamAggregatedResources: () =>
      open<DiscoveryRequest, SotwResponseBytes | SotwResponseRanges>((input, signal) =>
        openGrpcStream(client, input, signal, {
          url: sotwUrl,
          readMaxBytes,
          encode: encodeSotw,
          parse: readSotwResponse,
        }),
      ),
    deltaAggregatedResources: () =>
      open<DeltaDiscoveryRequest, DeltaResponseBytes | DeltaResponseRanges>((input, signal) =>
        openGrpcStream(client, input, signal, {
          url: deltaUrl,
          readMaxBytes,
          encode: encodeDelta,
          parse: readDeltaResponse,
        }),
      ),
    close: () => sessionManager.abort(),
    nextAddress() {
      if (endpoint.addressCount < 2) return false;
      endpoint.moveToNextAddress();
      // The next stream dials afresh, to that address.
      sessionManager.abort();
      failedAddresses++;
      if (failedAddresses < endpoint.addressCount) return true;
      failedAddresses = 0;
      return false;
    },
  };
};
