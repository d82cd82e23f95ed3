// A light ADS client for benchmarks with many streams: gRPC framing by hand over node:http2, many streams per
// connection (as many gRPC channels to one server would share nothing, this shares connections to keep 10,000
// streams within one process's means). Requests are encoded with protobuf-es; responses are only scanned for their
// resource count and nonce (lib/processes.ts), which costs the same whatever the server.
import * as http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  DeltaDiscoveryRequestSchema,
  DiscoveryRequestSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { scanResponse } from "./processes.js";
import type { Protocol } from "./raw-ads.js";

const SERVICE = "/envoy.service.discovery.v3.AggregatedDiscoveryService";
const PATHS = { sotw: `${SERVICE}/StreamAggregatedResources`, delta: `${SERVICE}/DeltaAggregatedResources` };

function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

export interface H2Connection {
  readonly session: http2.ClientHttp2Session;
  close(): void;
}

export function connect(address: string): H2Connection {
  const session = http2.connect(`http://${address}`);
  session.on("error", () => {});
  return { session, close: () => session.destroy() };
}

export interface SubscribedStream {
  /** Resources received so far (delta: summed over responses; SotW: the latest response's). */
  readonly received: () => number;
  /**
   * Resolves with the time (ms, `performance.timeOrigin + performance.now()`, comparable across processes) of the
   * first response from now on that `accept` takes, given its resource count and the running total.
   */
  until(accept: (resources: number, total: number) => boolean): Promise<number>;
  close(): void;
}

/**
 * One ADS stream subscribing to `names` of `typeUrl` on `connection`, ACKing every response (SotW: repeating the
 * names, as an ACK must).
 */
export function subscribe(
  connection: H2Connection,
  protocol: Protocol,
  typeUrl: string,
  names: readonly string[],
  nodeId: string,
): SubscribedStream {
  const stream = connection.session.request({
    ":method": "POST",
    ":path": PATHS[protocol],
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  const request = (nonce: string): Buffer =>
    frame(
      protocol === "sotw"
        ? toBinary(
            DiscoveryRequestSchema,
            create(DiscoveryRequestSchema, {
              ...(nonce ? {} : { node: { id: nodeId } }),
              typeUrl,
              resourceNames: [...names],
              responseNonce: nonce,
            }),
          )
        : toBinary(
            DeltaDiscoveryRequestSchema,
            create(DeltaDiscoveryRequestSchema, {
              ...(nonce ? {} : { node: { id: nodeId }, resourceNamesSubscribe: [...names] }),
              typeUrl,
              responseNonce: nonce,
            }),
          ),
    );
  let total = 0;
  let pending: Buffer = Buffer.alloc(0);
  const waiters: { accept: (resources: number, total: number) => boolean; resolve: (at: number) => void }[] = [];
  stream.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 5) {
      const length = pending.readUInt32BE(1);
      if (pending.length < 5 + length) break;
      const message = pending.subarray(5, 5 + length);
      pending = pending.subarray(5 + length);
      const at = performance.timeOrigin + performance.now();
      const { resources, nonce } = scanResponse(message);
      total = protocol === "sotw" ? resources : total + resources;
      stream.write(request(nonce));
      for (let i = 0; i < waiters.length; i++) {
        const waiter = waiters[i]!;
        if (!waiter.accept(resources, total)) continue;
        waiters.splice(i--, 1);
        waiter.resolve(at);
      }
    }
  });
  stream.write(request(""));
  return {
    received: () => total,
    until: (accept) => new Promise((resolve) => waiters.push({ accept, resolve })),
    close: () => stream.close(http2.constants.NGHTTP2_CANCEL),
  };
}
