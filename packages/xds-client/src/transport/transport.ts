// The transport: opens bidi ADS streams to one xDS server. The default runs gRPC on @connectrpc/connect-node's HTTP/2
// client (transport-http2.ts), loaded when its first stream opens; tests and embedders may inject
// another (an in-memory pair, a proxy).
import { loadModule, loadOnce } from "../shared/lazy-module.js";
import { StatusCode } from "../shared/xds-error.js";
import type * as Http2Module from "./transport-http2.js";
import type { XdsStream, XdsTransport, XdsTransportFactory } from "./transport-types.js";

/** Default receive limit: 1 GiB, enough for 100,000 clusters in one response (grpc-js-xds is stuck at 4 MiB). */
export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 1 << 30;

/** Loads a transport factory; the default one imports transport-http2.ts. */
export type TransportLoader = () => Promise<XdsTransportFactory>;

const loadHttp2: TransportLoader = () =>
  loadModule("../transport/transport-http2.js", (): Promise<typeof Http2Module> => import("./transport-http2.js")).then(
    (m) => m.createHttp2Transport,
  );

/** Why a stream failed when its transport could not be loaded: a connectivity failure, like any other. */
export class TransportLoadError extends Error {
  readonly code = StatusCode.UNAVAILABLE;
  constructor(cause: unknown) {
    super(`the xDS transport could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/**
 * A factory whose transports load the real one (`load`) when their first stream opens, then hand every stream to
 * it. Creating a transport does nothing else; a failed load fails that stream as a connection failure (its
 * `responses` reject with a `TransportLoadError`) and the next stream tries again.
 */
export function lazyTransportFactory(load: TransportLoader): XdsTransportFactory {
  return (server, options) => {
    let closed = false;
    let loaded: XdsTransport | undefined;
    const transport = loadOnce(() =>
      load().then(
        (factory) => {
          const created = factory(server, options);
          loaded = created;
          if (closed) created.close();
          return created;
        },
        (error: unknown) => {
          throw new TransportLoadError(error);
        },
      ),
    );
    return {
      streamAggregatedResources: () => lazyStream(transport(), (t) => t.streamAggregatedResources()),
      deltaAggregatedResources: () => lazyStream(transport(), (t) => t.deltaAggregatedResources()),
      close() {
        closed = true;
        transport.pending()?.then(
          (t) => t.close(),
          () => {},
        );
      },
      nextAddress: () => loaded?.nextAddress?.() ?? false,
    };
  };
}

/** A stream opened once `transport` is ready; until then, sends wait (in order) and reads wait. */
function lazyStream<Req, Res>(
  transport: Promise<XdsTransport>,
  open: (transport: XdsTransport) => XdsStream<Req, Res>,
): XdsStream<Req, Res> {
  let cancelled = false;
  const opened = transport.then((t) => {
    if (cancelled) throw new Error("stream cancelled before its transport loaded");
    return open(t);
  });
  // Reported through `responses`; the other uses of `opened` handle it themselves.
  opened.catch(() => {});
  return {
    send: (request) => opened.then((stream) => stream.send(request)),
    responses: { next: () => opened.then((stream) => stream.responses.next()) },
    // Never settles when the stream fails to open, as the interface asks of a stream never established.
    established: new Promise<void>((resolve) => {
      opened.then(
        (stream) => (stream.established ?? Promise.resolve()).then(resolve),
        () => {},
      );
    }),
    cancel() {
      cancelled = true;
      opened.then(
        (stream) => stream.cancel(),
        () => {},
      );
    },
  };
}

/**
 * The default transport: gRPC over HTTP/2 with connect-node, one HTTP/2 connection per server. Creating it does no
 * I/O and never throws; connect-node is loaded when the first stream opens. TLS files are read for each connection,
 * and what goes wrong there (or in loading) fails the streams; details in transport-http2.ts.
 */
export const createConnectTransport: XdsTransportFactory = lazyTransportFactory(loadHttp2);
