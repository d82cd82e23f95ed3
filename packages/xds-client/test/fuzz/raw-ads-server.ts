// A minimal gRPC server over node:http2 for the state-of-the-world ADS method, writing raw bytes: unlike a real
// control plane it can send frames that are not valid protobuf, or not valid gRPC framing.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import { type DiscoveryRequest, DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** One ADS stream: the requests it received, and raw writes. */
export interface RawStream {
  readonly id: number;
  readonly requests: DiscoveryRequest[];
  /** Resolves with the next request not yet taken. */
  nextRequest(): Promise<DiscoveryRequest>;
  /** Writes one gRPC message: the 5-byte prefix (`flags`, then the length of `message`) and `message`. */
  sendMessage(message: Uint8Array, flags?: number): void;
  /** Writes bytes as they are. */
  sendRaw(bytes: Uint8Array): void;
  /** Ends the response without trailers. */
  end(): void;
  readonly closed: Promise<void>;
}

export interface RawAdsServer {
  readonly address: string;
  /** Resolves with the next stream opened and not yet taken. */
  nextStream(): Promise<RawStream>;
  close(): Promise<void>;
}

/** A queue whose `take()` resolves with the next item, pushed before or after. */
function queue<T>() {
  const items: T[] = [];
  const waiters: ((item: T) => void)[] = [];
  return {
    push(item: T) {
      const waiter = waiters.shift();
      if (waiter) waiter(item);
      else items.push(item);
    },
    take(): Promise<T> {
      const item = items.shift();
      return item !== undefined ? Promise.resolve(item) : new Promise((resolve) => waiters.push(resolve));
    },
  };
}

export async function startRawAdsServer(): Promise<RawAdsServer> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  const streams = queue<RawStream>();
  let nextId = 1;
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (h2, headers) => {
    if (headers[":path"] !== ADS_PATH) {
      h2.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12" }, { endStream: true });
      return;
    }
    h2.respond({ ":status": 200, "content-type": "application/grpc+proto" });
    const requests: DiscoveryRequest[] = [];
    const incoming = queue<DiscoveryRequest>();
    let pending = Buffer.alloc(0);
    h2.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
        const length = pending.readUInt32BE(1);
        const request = fromBinary(DiscoveryRequestSchema, pending.subarray(5, 5 + length));
        pending = pending.subarray(5 + length);
        requests.push(request);
        incoming.push(request);
      }
    });
    h2.on("error", () => {});
    const closed = new Promise<void>((resolve) => h2.on("close", resolve));
    streams.push({
      id: nextId++,
      requests,
      nextRequest: () => incoming.take(),
      sendMessage(message, flags = 0) {
        const prefix = Buffer.alloc(5);
        prefix.writeUInt8(flags, 0);
        prefix.writeUInt32BE(message.length, 1);
        if (!h2.closed) h2.write(Buffer.concat([prefix, message]));
      },
      sendRaw(bytes) {
        if (!h2.closed) h2.write(bytes);
      },
      end() {
        if (!h2.closed) h2.end();
      },
      closed,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    nextStream: () => streams.take(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
