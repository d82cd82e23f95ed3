// A raw ADS client for the tests: connect-node over real HTTP/2, one request iterable per stream, and a
// background reader that buffers responses so a test can wait for the next one with a timeout.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Client, type ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import {
  type DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

export type AdsClient = Client<typeof AggregatedDiscoveryService>;

export function adsClient(url: string): AdsClient {
  return createClient(AggregatedDiscoveryService, createGrpcTransport({ baseUrl: url }));
}

interface Reader<T> {
  next(timeoutMs?: number): Promise<T>;
  /** Resolves if nothing arrives within `ms`; rejects with what did arrive. */
  none(ms?: number): Promise<void>;
  /** Resolves with the error (or undefined for OK) once the stream ends. */
  ended(timeoutMs?: number): Promise<ConnectError | undefined>;
  readonly buffered: T[];
}

function startReader<T>(iterable: AsyncIterable<T>): Reader<T> {
  const buffered: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let error: ConnectError | undefined;
  void (async () => {
    try {
      for await (const item of iterable) {
        buffered.push(item);
        wake?.();
      }
    } catch (e) {
      error = e as ConnectError;
    }
    done = true;
    wake?.();
  })();
  const waitFor = async (cond: () => boolean, timeoutMs: number, what: string): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    buffered,
    async next(timeoutMs = 3000) {
      await waitFor(() => buffered.length > 0 || done, timeoutMs, "a response");
      const item = buffered.shift();
      if (item === undefined) throw new Error(`stream ended instead of a response: ${String(error?.message)}`);
      return item;
    },
    async none(ms = 150) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (buffered.length > 0) throw new Error(`expected no response, got ${buffered.length}`);
    },
    async ended(timeoutMs = 3000) {
      await waitFor(() => done, timeoutMs, "the end of the stream");
      return error;
    },
  };
}

export interface SotwTestStream extends Reader<DiscoveryResponse> {
  send(request: MessageInitShape<typeof DiscoveryRequestSchema>): Promise<void>;
  /** ACKs (or NACKs, with `errorDetail`) a response, asking for `names`. */
  ack(response: DiscoveryResponse, names: string[], errorDetail?: { code: number; message: string }): Promise<void>;
  close(): void;
  abort(): void;
}

export function openSotw(client: AdsClient): SotwTestStream {
  const requests = createWritableIterable<DiscoveryRequest>();
  const controller = new AbortController();
  const reader = startReader(client.streamAggregatedResources(requests, { signal: controller.signal }));
  return {
    ...reader,
    buffered: reader.buffered,
    send: (request) => requests.write(create(DiscoveryRequestSchema, request)),
    ack: (response, names, errorDetail) =>
      requests.write(
        create(DiscoveryRequestSchema, {
          typeUrl: response.typeUrl,
          versionInfo: response.versionInfo,
          responseNonce: response.nonce,
          resourceNames: names,
          ...(errorDetail ? { errorDetail } : {}),
        }),
      ),
    close: () => requests.close(),
    abort: () => controller.abort(),
  };
}

export interface DeltaTestStream extends Reader<DeltaDiscoveryResponse> {
  send(request: MessageInitShape<typeof DeltaDiscoveryRequestSchema>): Promise<void>;
  close(): void;
  abort(): void;
}

export function openDelta(client: AdsClient): DeltaTestStream {
  const requests = createWritableIterable<MessageInitShape<typeof DeltaDiscoveryRequestSchema>>();
  const controller = new AbortController();
  const reader = startReader(client.deltaAggregatedResources(requests, { signal: controller.signal }));
  return {
    ...reader,
    buffered: reader.buffered,
    send: (request) => requests.write(request),
    close: () => requests.close(),
    abort: () => controller.abort(),
  };
}

/** Opens streams against one server and aborts whatever a test left open (call `cleanup` in afterEach). */
export interface Harness {
  readonly client: AdsClient;
  sotw(): SotwTestStream;
  delta(): DeltaTestStream;
  cleanup(): void;
}

export function createHarness(url: string): Harness {
  const client = adsClient(url);
  const open: { abort(): void }[] = [];
  return {
    client,
    sotw() {
      const stream = openSotw(client);
      open.push(stream);
      return stream;
    },
    delta() {
      const stream = openDelta(client);
      open.push(stream);
      return stream;
    },
    cleanup() {
      for (const stream of open.splice(0)) stream.abort();
    },
  };
}
