// The change paths of one protocol, run once per process at the first stream of that protocol
// (docs/decisions.md#control-plane-warming-the-change-paths).
//
// A server's setup runs the code that loads resources and answers a stream's first requests; the code that turns one
// resource change into a response (the change's version and log, finding the streams it concerns, the flush batch,
// the difference from what a client holds, the response of one resource, its ACK) first runs at the first change
// after start. V8 compiles a function when it is first called and runs it slowly until it has seen it run, so that
// first change cost about twice what later ones do. Here a private server with no listener serves two streams over
// calls that never touch a socket, and changes a resource each of them holds, 50 times, so that by the first real
// change that code is compiled and optimised. Nothing of it is seen from outside: the private server has its own
// resource store, streams, hooks and versions, and nothing refers to it afterwards.

import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { StreamKind } from "../hooks/hook-events.js";
import { noopLogger, prefixLogger } from "../logger.js";
import { buildCluster } from "../resources/builders.js";
import type { ResourceSet } from "../resources/resource-set.js";
import type { PeerIdentity } from "../security/identity.js";
import { DeltaStream } from "../streams/delta-stream.js";
import type { WireMessage } from "../streams/encoded-response.js";
import type { GrpcCallHandlers, GrpcServerCall } from "../streams/grpc-call.js";
import { SotwStream } from "../streams/sotw-stream.js";
import type { StreamHost } from "../streams/stream-base.js";
import { CDS_TYPE_URL } from "../type-urls.js";
import type { WarmUpReport } from "./warm-up-report.js";

/** What the warm-up needs of a server: a stream host with resource methods, that listens nowhere. */
export type WarmUpServer = StreamHost & Pick<ResourceSet, "setResources" | "setResource">;

const NAME = "warm-up";
const PEER: PeerIdentity = { address: undefined, tls: false, certificate: undefined, certificateError: undefined };
/**
 * Changes the warm-up makes. One gets the change paths compiled, but in single server processes the later changes
 * then took 0.93 ms of main thread against 0.80 ms with no warm-up (medians of eight); after 50, V8 has optimised
 * them and later changes took 0.75 ms (docs/decisions.md#control-plane-warming-the-change-paths).
 */
export const WARM_UP_CHANGES = 50;
/** Microtask turns a step may take (a flush is one turn, the connection taking a write another). */
const TURNS = 20;

/** A call with no connection under it: writes are kept, and taken by the "connection" a microtask later. */
class DetachedCall implements GrpcServerCall {
  readonly peer = undefined;
  readonly queuedBytes = 0;
  readonly written: Uint8Array[] = [];
  handlers: GrpcCallHandlers | undefined;

  start(handlers: GrpcCallHandlers): void {
    this.handlers = handlers;
  }

  write(message: WireMessage, onFlushed: () => void): void {
    this.written.push(Buffer.concat(message.parts, message.size));
    void Promise.resolve().then(onFlushed);
  }

  end(): void {
    this.handlers = undefined;
  }
}

interface WarmStream {
  readonly call: DetachedCall;
  /** Sends the stream's first request (with the subscription), or the ACK of its latest response. */
  request(first: boolean): void;
}

function openStream(server: WarmUpServer, id: number, kind: StreamKind, byName: boolean): WarmStream {
  const call = new DetachedCall();
  const logger = prefixLogger(noopLogger, "");
  const stream =
    kind === "sotw"
      ? new SotwStream(server, id, kind, call, logger, PEER)
      : new DeltaStream(server, id, kind, call, logger, PEER);
  stream.serve();
  const locators = byName ? [{ name: NAME, dynamicParameters: { shard: "0" } }] : [];
  const node = { id: `warm-up${String(id)}` };
  const send = (bytes: Uint8Array): void => {
    if (!call.handlers) throw new Error(`the ${kind} stream ${String(id)} ended`);
    call.handlers.message(bytes);
  };
  /** The latest response (its message, without the frame header). */
  const latest = (): Uint8Array => call.written.at(-1) ?? new Uint8Array(0);
  return {
    call,
    request(first) {
      if (kind === "sotw") {
        const acked = first ? undefined : fromBinary(DiscoveryResponseSchema, latest());
        const request = create(DiscoveryRequestSchema, {
          node: first ? node : undefined,
          typeUrl: CDS_TYPE_URL,
          versionInfo: acked?.versionInfo ?? "",
          responseNonce: acked?.nonce ?? "",
          resourceLocators: locators,
        });
        send(toBinary(DiscoveryRequestSchema, request));
      } else {
        const request = create(DeltaDiscoveryRequestSchema, {
          node: first ? node : undefined,
          typeUrl: CDS_TYPE_URL,
          responseNonce: first ? "" : fromBinary(DeltaDiscoveryResponseSchema, latest()).nonce,
          resourceLocatorsSubscribe: first ? locators : [],
        });
        send(toBinary(DeltaDiscoveryRequestSchema, request));
      }
    },
  };
}

/** Waits until every stream has `count` responses, a microtask turn at a time. */
async function responsesReach(streams: readonly WarmStream[], count: number): Promise<void> {
  for (let turn = 0; turn < TURNS; turn++) {
    if (streams.every((s) => s.call.written.length >= count)) return;
    await Promise.resolve();
  }
  const got = streams.map((s) => s.call.written.length).join(", ");
  throw new Error(`expected ${String(count)} responses on every stream, got ${got}`);
}

/**
 * Runs the change paths of one protocol on `server` (private, never listening, dropped afterwards): two streams, one
 * subscribing to a name by parameters (a TP2 variant), one to every cluster; each gets its first response and ACKs
 * it, then WARM_UP_CHANGES times a resource each holds changes, and each gets the change and ACKs it. A change and
 * its responses are one run of microtasks; the event loop goes on between changes. Never throws: a step that fails
 * ends the warm-up, which the report tells.
 */
export async function warmUp(server: WarmUpServer, kind: StreamKind): Promise<WarmUpReport> {
  const variant = (shard: number, marker: string) => ({
    resource: buildCluster({ name: NAME, edsServiceName: `${NAME}-${String(shard)}${marker}` }),
    constraints: `shard=${String(shard)}`,
  });
  const streams: WarmStream[] = [];
  try {
    server.setResources([variant(0, ""), variant(1, ""), { resource: buildCluster({ name: `${NAME}-plain` }) }]);
    // Ids below 1, which no real stream has: code that tells streams apart by id never takes these for a real one.
    streams.push(openStream(server, -1, kind, true), openStream(server, -2, kind, false));
    for (const stream of streams) stream.request(true);
    await responsesReach(streams, 1);
    for (const stream of streams) stream.request(false);
    // Each change is one for each stream: a variant the first holds, and a cluster without variants the wildcard holds.
    for (let change = 1; change <= WARM_UP_CHANGES; change++) {
      const { resource, constraints } = variant(0, `-changed-${String(change)}`);
      server.setResource(resource, { constraints });
      server.setResource(buildCluster({ name: `${NAME}-plain`, edsServiceName: `changed-${String(change)}` }));
      await responsesReach(streams, 1 + change);
      for (const stream of streams) stream.request(false);
      // The server's real work goes on between changes: each holds the event loop for about a millisecond.
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const stream of streams) stream.call.handlers?.halfClose();
    return { responses: streams.map((s) => s.call.written.length) };
  } catch (error) {
    return {
      responses: streams.map((s) => s.call.written.length),
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
