// Our client under test: a Connect client on @xdskit/connect-xds's transport, with the channel's bootstrap given to
// the transport (which then makes and owns its XdsClient, as a grpc-js-xds channel does).
import { create } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createXdsTransport } from "@xdskit/connect-xds";
import { HOSTNAME_HEADER } from "./backend.js";
import type { CallOptions, CallOutcome, InteropClient, InteropClientKind, RpcMethod } from "./client-adapter.js";
import { EmptySchema, SimpleRequestSchema, TestService } from "./gen/grpc/testing/test_pb.js";

function createConnectXdsClient(target: string, bootstrap: object): InteropClient {
  const transport = createXdsTransport({ target, bootstrap: JSON.stringify(bootstrap) });
  const client = createClient(TestService, transport);
  const inFlight = new Set<AbortController>();
  return {
    async call(method: RpcMethod, options: CallOptions): Promise<CallOutcome> {
      const abort = new AbortController();
      inFlight.add(abort);
      const headers = new Headers();
      for (const [key, value] of options.metadata) headers.append(key, value);
      let headerPeer: string | undefined;
      const callOptions = {
        headers,
        timeoutMs: options.timeoutMs,
        signal: abort.signal,
        onHeader: (h: Headers) => {
          headerPeer = h.get(HOSTNAME_HEADER) ?? undefined;
        },
      };
      try {
        let peer: string | undefined;
        if (method === "UnaryCall") {
          const response = await client.unaryCall(create(SimpleRequestSchema, { fillServerId: true }), callOptions);
          peer = response.hostname || headerPeer;
        } else {
          await client.emptyCall(create(EmptySchema), callOptions);
          peer = headerPeer;
        }
        return peer === undefined ? { ok: true, code: 0 } : { ok: true, code: 0, peer };
      } catch (error) {
        const e = ConnectError.from(error);
        return { ok: false, code: e.code, message: e.rawMessage };
      } finally {
        inFlight.delete(abort);
      }
    },
    async close() {
      for (const abort of inFlight) abort.abort();
      await transport.close();
    },
  };
}

export const connectXdsClientKind: InteropClientKind = {
  name: "connect-xds",
  create: (options) => createConnectXdsClient(options.target, options.bootstrap),
};
