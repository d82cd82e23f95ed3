// The connect path: client and bidi streams (and every call with the internal `unaryCalls: "connect"`) run
// connect's gRPC protocol code over connect-node's HTTP/2 client on one connection. Around connect, what the lean
// unary call does too where gRPC's rules and connect-node's differ:
// - each response body passes an EnvelopeGate: every length prefix is checked against the receive limit, and
//   connect's decoder reserves memory only for messages whose bytes all arrived
//   (docs/decisions.md#connect-xds-receive-limit);
// - a broken connection fails the call UNAVAILABLE, not ABORTED (docs/decisions.md#connect-xds-broken-connections);
// - a deadline too long for a grpc-timeout in milliseconds (10^8 ms or more) is kept here, on a long timer, and sent
//   in a coarser unit; connect sees no deadline (docs/decisions.md#long-timers);
// and, when per-call metrics are on, the A66 message byte counts, from the length prefixes each way.
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { UniversalClientFn, UniversalClientRequest } from "@connectrpc/connect/protocol";
import { createNodeHttpClient } from "@connectrpc/connect-node";
import type { Http2Connection } from "../connections/connection.js";
import { clearLongTimer, setLongTimeout } from "../shared/long-timer.js";
import { EnvelopeCounter, EnvelopeGate } from "./envelopes.js";
import { encodeGrpcTimeout, needsCoarserUnit } from "./grpc-timeout.js";
import { fixBrokenConnectionError } from "./grpc-wire.js";
import { type MessageByteCounter, takeCounter } from "./message-bytes.js";

type HeaderInit = ConstructorParameters<typeof Headers>[0];

/** The request body, counting its message bytes as they go (A66; the retry buffer reserves them). */
function countedRequest(body: AsyncIterable<Uint8Array>, counter: MessageByteCounter): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const inner = body[Symbol.asyncIterator]();
      const reader = new EnvelopeCounter();
      return {
        next: () =>
          inner.next().then((result) => {
            if (result.done !== true) {
              reader.read(result.value);
              counter.sent = reader.total;
              counter.onSent?.(reader.total);
            }
            return result;
          }),
        return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
        throw: (error?: unknown) => inner.throw?.(error) ?? Promise.reject(error),
      } as AsyncIterator<Uint8Array>;
    },
  };
}

/** The response body through `gate`; a broken connection's error as UNAVAILABLE. */
function gatedResponse(body: AsyncIterable<Uint8Array>, gate: EnvelopeGate): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const inner = body[Symbol.asyncIterator]();
      let ready: Uint8Array[] = [];
      let ended = false;
      const next = async (): Promise<IteratorResult<Uint8Array>> => {
        while (ready.length === 0) {
          if (ended) return { done: true, value: undefined };
          let result: IteratorResult<Uint8Array>;
          try {
            result = await inner.next();
          } catch (error) {
            throw fixBrokenConnectionError(error);
          }
          if (result.done === true) {
            ended = true;
            ready = gate.end();
          } else {
            ready = gate.push(result.value);
          }
        }
        return { done: false, value: ready.shift()! };
      };
      return {
        next,
        return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
        throw: (error?: unknown) => inner.throw?.(error) ?? Promise.reject(error),
      } as AsyncIterator<Uint8Array>;
    },
  };
}

/** connect-node's HTTP/2 client on `connection`, its responses gated with `readMaxBytes` (and counted, for A66). */
export function createConnectHttpClient(connection: Http2Connection, readMaxBytes: number): UniversalClientFn {
  const base = createNodeHttpClient({ httpVersion: "2", sessionProvider: () => connection });
  return (req: UniversalClientRequest) => {
    const counter = takeCounter();
    const request =
      counter === undefined || req.body === undefined ? req : { ...req, body: countedRequest(req.body, counter) };
    const onPrefix =
      counter === undefined
        ? undefined
        : (length: number) => {
            counter.received += length;
            counter.responseMessages++;
          };
    return base(request).then(
      (res) => {
        // A6's commit point. connect's HTTP client does not say whether the header block ended the stream, so a
        // Trailers-Only response is told by connect's own test: a grpc-status among the headers.
        if (counter !== undefined && !res.header.has("grpc-status")) counter.responseHeaders = true;
        return { ...res, body: gatedResponse(res.body, new EnvelopeGate(readMaxBytes, onPrefix)) };
      },
      (error: unknown) => {
        throw fixBrokenConnectionError(error);
      },
    );
  };
}

/** A deadline kept by the transport: the signal for connect, the header for the server, and the timer's end. */
function longDeadline(signal: AbortSignal | undefined, timeoutMs: number, header: HeaderInit) {
  const controller = new AbortController();
  // connect's own deadline error (its createDeadlineSignal).
  const timer = setLongTimeout(
    () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
    timeoutMs,
  );
  const headers = new Headers(header);
  headers.set("grpc-timeout", encodeGrpcTimeout(timeoutMs));
  return {
    signal: signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]),
    headers,
    end: () => clearLongTimer(timer),
  };
}

/** `messages`, calling `end` once when they end, fail or are abandoned. */
function endingWith<T>(messages: AsyncIterable<T>, end: () => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const inner = messages[Symbol.asyncIterator]();
      return {
        next: () =>
          inner.next().then(
            (result) => {
              if (result.done === true) end();
              return result;
            },
            (error: unknown) => {
              end();
              throw error;
            },
          ),
        return: (value?: unknown) => {
          end();
          return inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
        },
        throw: (error?: unknown) => {
          end();
          return inner.throw?.(error) ?? Promise.reject(error);
        },
      } as AsyncIterator<T>;
    },
  };
}

/** `connect`, with the deadlines its grpc-timeout header cannot carry kept by the transport (longDeadline). */
export function withLongDeadlines(connect: Transport): Transport {
  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      if (timeoutMs === undefined || !needsCoarserUnit(timeoutMs)) {
        return connect.unary(method, signal, timeoutMs, header, input, contextValues);
      }
      const deadline = longDeadline(signal, timeoutMs, header);
      return connect
        .unary(method, deadline.signal, undefined, deadline.headers, input, contextValues)
        .finally(deadline.end);
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      if (timeoutMs === undefined || !needsCoarserUnit(timeoutMs)) {
        return connect.stream(method, signal, timeoutMs, header, input, contextValues);
      }
      const deadline = longDeadline(signal, timeoutMs, header);
      return connect.stream(method, deadline.signal, undefined, deadline.headers, input, contextValues).then(
        (response) => ({ ...response, message: endingWith(response.message, deadline.end) }),
        (error: unknown) => {
          deadline.end();
          throw error;
        },
      );
    },
  };
}
