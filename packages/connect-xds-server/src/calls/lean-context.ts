// The HandlerContext of a call on the lean gRPC path: what Connect's createHandlerContext gives an implementation,
// with each costly part made on first use. Invariants, as Connect's gRPC handler keeps them:
// - `signal` aborts when the deadline (`grpc-timeout`) passes, with DEADLINE_EXCEEDED "the operation timed out";
//   when the client resets the stream, with the reset code's error (CANCEL: CANCELED); when the call ends, with the
//   error it ended with, or an AbortError. A signal first read after one of these is already aborted with its reason.
// - `requestHeader` holds the request's headers without pseudo-headers; `responseHeader` starts with the gRPC
//   content type (and `grpc-encoding` when the response is compressed); `responseTrailer` with `grpc-status: 0`.
// - `timeoutMs()` counts down from the deadline; undefined without one.

import type { IncomingHttpHeaders } from "node:http2";
import type { DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type HandlerContext,
  type MethodImplSpec,
} from "@connectrpc/connect";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../long-timer.js";

/** What the lean path needs of a context besides the HandlerContext itself. */
export interface LeanContext extends HandlerContext {
  /** Ends the call: the signal (if made) aborts with `reason`, else with an AbortError. Idempotent. */
  finish(reason?: unknown): void;
  /** The client reset the stream: the signal aborts with this reason. */
  cancel(reason: unknown): void;
  /** The response header and trailer, if the implementation or the call touched them (else the defaults). */
  readonly touchedResponseHeader: Headers | undefined;
  readonly touchedResponseTrailer: Headers | undefined;
}

export interface LeanContextInit {
  readonly spec: MethodImplSpec;
  readonly headers: IncomingHttpHeaders;
  /** The deadline from `grpc-timeout`, in ms from now; undefined without one. */
  readonly timeoutMs: number | undefined;
  /** `http` or `https`, and the authority, for `url`. */
  readonly urlBase: string;
  readonly path: string;
  /** The response headers Connect starts with (content type, `grpc-encoding`). */
  readonly responseHeaderInit: Readonly<Record<string, string>>;
}

/** Request headers as Connect's node adapter converts them: pseudo-headers dropped, arrays appended. */
export function requestHeadersOf(headers: IncomingHttpHeaders): Headers {
  const result = new Headers();
  for (const name in headers) {
    if (name.charCodeAt(0) === 0x3a /* ":" */) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === "string") result.append(name, value);
    else if (typeof value === "number") result.append(name, String(value));
    else for (const item of value) result.append(name, item);
  }
  return result;
}

const deadlineError = () => new ConnectError("the operation timed out", Code.DeadlineExceeded);

export function createLeanContext(init: LeanContextInit): LeanContext {
  const startedAt = Date.now();
  const deadlineAt = init.timeoutMs === undefined ? undefined : startedAt + init.timeoutMs;
  let controller: AbortController | undefined;
  let timer: LongTimer | undefined;
  /** Set once the call ended or was reset, before or after the signal was made. */
  let ended: { reason: unknown } | undefined;
  let requestHeader: Headers | undefined;
  let responseHeader: Headers | undefined;
  let responseTrailer: Headers | undefined;
  let values: ContextValues | undefined;
  let url: string | undefined;

  function abort(reason: unknown): void {
    clearLongTimer(timer);
    timer = undefined;
    if (controller !== undefined && !controller.signal.aborted) {
      if (reason === undefined) controller.abort();
      else controller.abort(reason);
    }
  }

  const context = {
    method: init.spec.method as DescMethod,
    service: init.spec.method.parent,
    requestMethod: "POST",
    protocolName: "grpc",
    get url() {
      url ??= new URL(init.path, init.urlBase).toString();
      return url;
    },
    timeoutMs: deadlineAt === undefined ? () => undefined : () => deadlineAt - Date.now(),
    get requestHeader() {
      requestHeader ??= requestHeadersOf(init.headers);
      return requestHeader;
    },
    get responseHeader() {
      responseHeader ??= new Headers(init.responseHeaderInit);
      return responseHeader;
    },
    get responseTrailer() {
      responseTrailer ??= new Headers({ "grpc-status": "0" });
      return responseTrailer;
    },
    get values() {
      values ??= createContextValues();
      return values;
    },
    get signal() {
      if (controller !== undefined) return controller.signal;
      controller = new AbortController();
      if (ended !== undefined) {
        if (ended.reason === undefined) controller.abort();
        else controller.abort(ended.reason);
      } else if (deadlineAt !== undefined) {
        const leftMs = deadlineAt - Date.now();
        if (leftMs <= 0) controller.abort(deadlineError());
        else {
          timer = setLongTimeout(() => abort(deadlineError()), leftMs);
        }
      }
      return controller.signal;
    },
    finish(reason?: unknown) {
      if (ended !== undefined) return;
      ended = { reason };
      abort(reason);
    },
    cancel(reason: unknown) {
      context.finish(reason);
    },
    get touchedResponseHeader() {
      return responseHeader;
    },
    get touchedResponseTrailer() {
      return responseTrailer;
    },
  };
  return context as LeanContext;
}
