// An in-memory ADS server for fine-grained state-machine tests (timers, backoff, exact requests). The protocol flows
// are also tested over real HTTP/2 against @xdskit/control-plane.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  type ResourceErrorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { XdsStream, XdsTransport, XdsTransportFactory } from "../../src/index.js";

export interface FakeStream {
  readonly id: number;
  readonly server: string;
  readonly requests: DiscoveryRequest[];
  respond(response: MessageInitShape<typeof DiscoveryResponseSchema>): void;
  /** Responds, then resolves with the client's answer to it (its ACK or NACK). */
  exchange(response: MessageInitShape<typeof DiscoveryResponseSchema>): Promise<DiscoveryRequest>;
  /** Fails the stream with a gRPC status code (as a ConnectError-like object). */
  fail(code: number, message?: string): void;
  /** Ends the stream with OK. */
  end(): void;
  readonly cancelled: boolean;
  /** Resolves with the next request not yet taken. */
  nextRequest(): Promise<DiscoveryRequest>;
}

export interface FakeServer {
  readonly transportFactory: XdsTransportFactory;
  readonly streams: FakeStream[];
  /** Resolves with the next stream opened (or the newest already open one not yet taken). */
  nextStream(): Promise<FakeStream>;
  latest(): FakeStream;
}

export function createFakeServer(): FakeServer {
  const streams: FakeStream[] = [];
  let taken = 0;
  const streamWaiters: ((s: FakeStream) => void)[] = [];
  let seq = 0;

  function openStream(server: string): XdsStream<DiscoveryRequest, DiscoveryResponse> {
    const requests: DiscoveryRequest[] = [];
    let requestsTaken = 0;
    const requestWaiters: ((r: DiscoveryRequest) => void)[] = [];
    const inbox: ({ value: DiscoveryResponse } | { error: unknown } | { done: true })[] = [];
    const readers: ((r: IteratorResult<DiscoveryResponse>) => void)[] = [];
    const rejecters: ((e: unknown) => void)[] = [];
    let finished = false;
    let cancelled = false;
    const pump = () => {
      while (readers.length > 0 && inbox.length > 0) {
        const item = inbox.shift()!;
        const resolve = readers.shift()!;
        const reject = rejecters.shift()!;
        if ("value" in item) resolve({ value: item.value, done: false });
        else if ("error" in item) reject(item.error);
        else resolve({ value: undefined, done: true });
      }
    };
    const push = (item: (typeof inbox)[number]) => {
      if (finished) return;
      if (!("value" in item)) finished = true;
      inbox.push(item);
      pump();
    };
    const fake: FakeStream = {
      id: ++seq,
      server,
      requests,
      respond: (response) => push({ value: create(DiscoveryResponseSchema, response) }),
      exchange(response) {
        fake.respond(response);
        return fake.nextRequest();
      },
      fail: (code, message = "stream failed") =>
        push({ error: Object.assign(new Error(message), { code, rawMessage: message }) }),
      end: () => push({ done: true }),
      get cancelled() {
        return cancelled;
      },
      nextRequest() {
        if (requestsTaken < requests.length) return Promise.resolve(requests[requestsTaken++]!);
        return new Promise((resolve) => requestWaiters.push(resolve));
      },
    };
    streams.push(fake);
    const waiter = streamWaiters.shift();
    if (waiter) {
      taken += 1;
      waiter(fake);
    }
    return {
      async send(request) {
        if (finished || cancelled) throw new Error("stream ended");
        requests.push(request);
        const w = requestWaiters.shift();
        if (w) {
          requestsTaken += 1;
          w(request);
        }
      },
      responses: {
        next: () =>
          new Promise((resolve, reject) => {
            readers.push(resolve);
            rejecters.push(reject);
            pump();
          }),
      },
      cancel() {
        cancelled = true;
        if (!finished) push({ done: true });
      },
    };
  }

  const transportFactory: XdsTransportFactory = (server) => {
    const transport: XdsTransport = {
      streamAggregatedResources: () => openStream(server.serverUri),
      deltaAggregatedResources: () => {
        throw new Error("delta is not faked");
      },
      close: () => {},
    };
    return transport;
  };

  return {
    transportFactory,
    streams,
    nextStream() {
      if (taken < streams.length) return Promise.resolve(streams[taken++]!);
      return new Promise((resolve) => streamWaiters.push(resolve));
    },
    latest: () => streams[streams.length - 1]!,
  };
}

export function resourceError(
  name: string,
  code: number,
  message: string,
): MessageInitShape<typeof ResourceErrorSchema> {
  return { resourceName: { name }, errorDetail: { code, message } };
}
