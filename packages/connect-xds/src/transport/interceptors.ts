// Connect interceptors around an xDS transport's calls (the `interceptors` option): they wrap the whole call, as
// connect's own transports apply them, above routing, picking and retries, so a header an interceptor sets is seen
// by route matching and sent on every attempt. connect's runUnaryCall / runStreamingCall apply them; the call's
// deadline stays the transport's own (the route's max_stream_duration caps it, the wait for configuration names
// what it waited for), so no deadline is given to connect. Without interceptors none of this runs.
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  type ContextValues,
  createContextValues,
  type Interceptor,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { runStreamingCall, runUnaryCall } from "@connectrpc/connect/protocol";

type HeaderInit = ConstructorParameters<typeof Headers>[0];

/**
 * `calls` with `interceptors` around each call (the first interceptor outermost, as in connect). `target` makes each
 * request's `url` (`xds:///name/package.Service/Method`).
 */
export function withInterceptors(calls: Transport, interceptors: readonly Interceptor[], target: string): Transport {
  if (interceptors.length === 0) return calls;
  const list = [...interceptors];
  const base = target.endsWith("/") ? target.slice(0, -1) : target;
  const urlOf = (method: { readonly parent: { readonly typeName: string }; readonly name: string }) =>
    `${base}/${method.parent.typeName}/${method.name}`;
  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      return runUnaryCall<I, O>({
        interceptors: list,
        ...(signal === undefined ? {} : { signal }),
        req: {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: urlOf(method),
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (req) => calls.unary(method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeaderInit,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      return runStreamingCall<I, O>({
        interceptors: list,
        ...(signal === undefined ? {} : { signal }),
        req: {
          stream: true,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: urlOf(method),
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (req) => calls.stream(method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
  };
}
