// The Connect transport of one connection (connection.ts): unary calls on the lean call (grpc-unary-call.ts,
// docs/decisions.md#connect-xds-lean-unary-calls), server streams on the lean server stream (grpc-server-stream.ts),
// client and bidi streams through connect's gRPC protocol code over the same session (connect-path.ts), and, when
// per-call metrics are on, a count of the compressed message bytes each way (A66: gRPC framing excluded).
import type * as http2 from "node:http2";
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import type { ContextValues, StreamResponse, Transport, UnaryResponse } from "@connectrpc/connect";
import {
  type Compression,
  createMethodSerializationLookup,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import { createTransport, requestHeaderWithCompression } from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import type { Http2Connection } from "../connections/connection.js";
import { DEFAULT_READ_MAX_BYTES } from "../connections/constants.js";
import type { EndpointTransportOptions } from "../connections/transport-options.js";
import { createConnectHttpClient, withLongDeadlines } from "./connect-path.js";
import { ServerStreamCall } from "./grpc-server-stream.js";
import { encodeGrpcTimeout } from "./grpc-timeout.js";
import { type MethodCodec, UnaryCall, type UnaryCallConfig } from "./grpc-unary-call.js";
import { appendNodeHeader } from "./grpc-wire.js";
import { takeCounter } from "./message-bytes.js";

export type { EndpointTransportOptions };

type HeaderInit = ConstructorParameters<typeof Headers>[0];

/** The transport options plus the internal choice of the unary call path. */
export interface EndpointTransportSettings extends EndpointTransportOptions {
  /** `"connect"`: unary calls and server streams through connect's gRPC transport as well (the slow path). */
  readonly unaryCalls?: "lean" | "connect";
}

/**
 * The request headers of one call as connect's gRPC transport builds them (the caller's, then content-type, te,
 * grpc-encoding and grpc-accept-encoding set over them, user-agent when the caller gave none, grpc-timeout when the
 * call has a deadline, in at most 8 digits), as the node header object connect-node sends, with the `:method` and
 * `:path` of `path`.
 */
function requestHeaderBuilder(
  useBinaryFormat: boolean,
  acceptCompression: UnaryCallConfig["acceptCompression"],
  sendCompression: UnaryCallConfig["sendCompression"],
): (header: HeaderInit, timeoutMs: number | undefined, path: string) => http2.OutgoingHttpHeaders {
  // connect's own defaults, taken once: every header it sets on a call without headers or deadline.
  const fixed: [string, string][] = [];
  let userAgent = "";
  requestHeaderWithCompression(
    useBinaryFormat,
    undefined,
    undefined,
    acceptCompression as Compression[],
    sendCompression,
  ).forEach((value, name) => {
    if (name === "user-agent") userAgent = value;
    else fixed.push([name, value]);
  });
  return (header, timeoutMs, path) => {
    const user = header instanceof Headers ? header : new Headers(header);
    const out: Record<string, string | string[]> = { ":method": "POST", ":path": path };
    user.forEach((value, name) => {
      appendNodeHeader(out, name, value);
    });
    for (const [name, value] of fixed) out[name] = value;
    if (out["user-agent"] === undefined) out["user-agent"] = userAgent;
    if (timeoutMs !== undefined) out["grpc-timeout"] = encodeGrpcTimeout(timeoutMs);
    return out;
  };
}

/** A Connect gRPC transport whose calls go to `session` (one backend connection). */
export function createEndpointTransport(session: Http2Connection, options: EndpointTransportSettings): Transport {
  const useBinaryFormat = options.useBinaryFormat ?? true;
  const acceptCompression = options.acceptCompression ?? [compressionGzip, compressionBrotli];
  const sendCompression = options.sendCompression ?? null;
  // gRPC's receive limit, not connect-node's 4 GiB (docs/decisions.md#connect-xds-receive-limit).
  const limits = validateReadWriteMaxBytes(
    options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES,
    options.writeMaxBytes,
    options.compressMinBytes,
  );
  const connect = withLongDeadlines(
    createTransport({
      httpClient: createConnectHttpClient(session, limits.readMaxBytes),
      baseUrl: session.authority,
      useBinaryFormat,
      interceptors: [],
      acceptCompression,
      sendCompression,
      ...limits,
      ...(options.jsonOptions === undefined ? {} : { jsonOptions: options.jsonOptions }),
      ...(options.binaryOptions === undefined ? {} : { binaryOptions: options.binaryOptions }),
    }),
  );
  if (options.unaryCalls === "connect") return connect;

  const config: UnaryCallConfig = {
    acceptCompression,
    sendCompression,
    compressMinBytes: limits.compressMinBytes,
    readMaxBytes: limits.readMaxBytes,
  };
  const requestHeaders = requestHeaderBuilder(useBinaryFormat, acceptCompression, sendCompression);
  // connect builds these per call; they depend only on the method and the options.
  const codecs = new WeakMap<object, MethodCodec>();
  const codecOf = (method: DescMethod): MethodCodec => {
    let codec = codecs.get(method);
    if (codec === undefined) {
      const lookup = createMethodSerializationLookup(method, options.binaryOptions, options.jsonOptions, limits);
      const input = lookup.getI(useBinaryFormat);
      const output = lookup.getO(useBinaryFormat);
      codec = {
        path: `/${method.parent.typeName}/${method.name}`,
        serialize: (message) => input.serialize(message as never),
        parse: (data) => output.parse(data),
      };
      codecs.set(method, codec);
    }
    return codec;
  };
  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: MessageInitShape<I>,
    ): Promise<UnaryResponse<I, O>> {
      const counter = takeCounter();
      try {
        // As connect's transport: no deadline for none or a non-positive one; headers before the message.
        const timeout = timeoutMs === undefined || timeoutMs <= 0 ? undefined : timeoutMs;
        const codec = codecOf(method);
        const headers = requestHeaders(header, timeout, codec.path);
        const message = create(method.input, input);
        const call = new UnaryCall<O>(method as DescMethodUnary<DescMessage, O>, config, codec, signal, counter);
        call.start(session, headers, timeout, message);
        return call.promise as Promise<UnaryResponse<I, O>>;
      } catch (error) {
        return Promise.reject(error);
      }
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      // Client and bidi streams go through connect's protocol code; server streams run lean, as unary calls do.
      if (method.methodKind !== "server_streaming") {
        return connect.stream(method, signal, timeoutMs, header, input, contextValues);
      }
      const counter = takeCounter();
      try {
        const timeout = timeoutMs === undefined || timeoutMs <= 0 ? undefined : timeoutMs;
        const codec = codecOf(method);
        const headers = requestHeaders(header, timeout, codec.path);
        const call = new ServerStreamCall<O>(
          method as DescMethodStreaming<DescMessage, O>,
          config,
          codec,
          signal,
          counter,
        );
        call.start(session, headers, timeout, input);
        return call.response as Promise<StreamResponse<I, O>>;
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
