// A transport's two Connect entry points, unary and streaming, each one call of the per-call path (call.ts): a
// streaming call's request messages kept for its retries (A6), and why a call failed logged at debug.
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  ConnectError,
  type ContextValues,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { Logger } from "@xdskit/xds-client";
import { runCall } from "../call/call.js";
import { endStream, endUnary } from "../call/call-attempt.js";
import type { CallContext } from "../call/call-context.js";
import { createRequestReplay, type RequestReplay } from "../call/request-replay.js";

type MethodDesc = { readonly parent: { readonly typeName: string }; readonly name: string };

/** `package.Service/Method` of each method descriptor, built once (the call path and metrics use it per call). */
const methodNames = new WeakMap<object, string>();

function methodName(method: MethodDesc): string {
  let name = methodNames.get(method);
  if (name === undefined) {
    name = `${method.parent.typeName}/${method.name}`;
    methodNames.set(method, name);
  }
  return name;
}

/** The unary and streaming calls of a transport, run with `ctx`. */
export function createTransportCalls(ctx: CallContext, logger: Logger): Transport {
  // Why each call failed, at debug: read once, so calls pay nothing when debug is off.
  const debugCalls = logger.isEnabled?.("debug") ?? true;
  function traceFailure<R>(call: Promise<R>, method: MethodDesc): Promise<R> {
    if (!debugCalls) return call;
    return call.catch((error: unknown) => {
      logger.debug(`[connect-xds ${ctx.target}] ${methodName(method)} failed: ${ConnectError.from(error).message}`);
      throw error;
    });
  }

  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const headers = new Headers(header);
      return traceFailure(
        runCall(
          ctx,
          methodName(method),
          undefined,
          signal,
          timeoutMs,
          headers,
          (transport, remaining) => transport.unary(method, signal, remaining, headers, input, contextValues),
          endUnary,
        ),
        method,
      );
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const headers = new Headers(header);
      // A6: the request messages are kept until the call is committed, so an attempt can be made again.
      const replay = createRequestReplay(input);
      return traceFailure(
        runCall(
          ctx,
          methodName(method),
          replay as RequestReplay<unknown>,
          signal,
          timeoutMs,
          headers,
          (transport, remaining) =>
            transport.stream(method, signal, remaining, headers, replay.attempt(), contextValues),
          endStream,
        ),
        method,
      );
    },
  };
}
