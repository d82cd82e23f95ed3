import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { EchoService, OtherService } from "./echo-service.js";

export interface CallOptions {
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface Echo {
  unary(request: { value: string }, options?: CallOptions): Promise<{ value: string }>;
  serverStream(request: { value: string }, options?: CallOptions): AsyncIterable<{ value: string }>;
  clientStream(requests: AsyncIterable<{ value: string }>, options?: CallOptions): Promise<{ value: string }>;
  bidiStream(requests: AsyncIterable<{ value: string }>, options?: CallOptions): AsyncIterable<{ value: string }>;
}

export function echoClient(transport: Transport): Echo {
  return createClient(EchoService, transport) as unknown as Echo;
}

export function otherClient(transport: Transport): { call(request: { value: string }): Promise<{ value: string }> } {
  return createClient(OtherService, transport) as never;
}

export async function* values(...items: string[]) {
  for (const value of items) yield create(StringValueSchema, { value });
}

/** The backend name that served a unary call, or the error. */
export async function served(echo: Echo, options?: CallOptions): Promise<string> {
  try {
    return (await echo.unary({ value: "x" }, options)).value.split(":")[0]!;
  } catch (error) {
    throw ConnectError.from(error);
  }
}

/** Calls until `name` serves one (each call awaited), at most `limit` calls; returns how many it took. */
export async function untilServedBy(echo: Echo, name: string, limit = 200): Promise<number> {
  for (let i = 1; i <= limit; i++) {
    const by = await served(echo).catch(() => "");
    if (by === name) return i;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${name} served none of ${limit} calls`);
}
