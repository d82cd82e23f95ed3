// Our client under test: a Connect client of the test service over @xdskit/connect-xds's transport. Each channel
// is one transport with its own bootstrap (so its own XdsClient, closed with the transport).
import { setMaxListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { type CallOptions as ConnectCallOptions, ConnectError, createClient } from "@connectrpc/connect";
import { createXdsTransport } from "@xdskit/connect-xds";
import { HOSTNAME_HEADER } from "./backend.js";
import type { CallOptions, CallOutcome, InteropClient, InteropClientKind, RpcMethod } from "./client-adapter.js";
import { EmptySchema, SimpleRequestSchema, TestService } from "./gen/grpc/testing/test_pb.js";

function createConnectXdsClient(target: string, bootstrapJson: string): InteropClient {
  const transport = createXdsTransport({ target, bootstrap: bootstrapJson });
  const service = createClient(TestService, transport);
  // close() cancels what is in flight, as closing a gRPC channel does. Every call in flight listens to this one
  // signal (each removes its listener when it ends), so there is no count past which listeners mean a leak.
  const closing = new AbortController();
  setMaxListeners(0, closing.signal);

  const send = async (method: RpcMethod, options: ConnectCallOptions): Promise<string | undefined> => {
    if (method === "UnaryCall") {
      return (await service.unaryCall(create(SimpleRequestSchema, { fillServerId: true }), options)).hostname;
    }
    await service.emptyCall(create(EmptySchema), options);
    return undefined;
  };

  return {
    async call(method: RpcMethod, options: CallOptions): Promise<CallOutcome> {
      let headerPeer: string | undefined;
      try {
        const bodyPeer = await send(method, {
          headers: options.metadata.map(([key, value]) => [key, value] as [string, string]),
          timeoutMs: options.timeoutMs,
          signal: closing.signal,
          onHeader: (headers) => {
            headerPeer = headers.get(HOSTNAME_HEADER) ?? undefined;
          },
        });
        const peer = bodyPeer || headerPeer;
        return peer === undefined ? { ok: true, code: 0 } : { ok: true, code: 0, peer };
      } catch (error) {
        const connectError = ConnectError.from(error);
        return { ok: false, code: connectError.code, message: connectError.rawMessage };
      }
    },
    async close() {
      closing.abort();
      await transport.close();
    },
  };
}

export const connectXdsClientKind: InteropClientKind = {
  name: "connect-xds",
  create: ({ target, bootstrap }) => createConnectXdsClient(target, JSON.stringify(bootstrap)),
};
