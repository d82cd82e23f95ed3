// The peer under test: @grpc/grpc-js with @grpc/grpc-js-xds (nobody here wrote either). Each channel gets its own
// bootstrap through the channel option grpc-js-xds reads before the environment (so each channel also has its own
// XdsClient), and the test service's messages go through protobuf-es serializers.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { HOSTNAME_HEADER } from "./backend.js";
import type { CallOptions, CallOutcome, InteropClient, InteropClientKind, RpcMethod } from "./client-adapter.js";
import { rpcPath } from "./client-adapter.js";
import {
  type Empty,
  EmptySchema,
  type SimpleRequest,
  SimpleRequestSchema,
  type SimpleResponse,
  SimpleResponseSchema,
} from "./gen/grpc/testing/test_pb.js";

/** The channel option grpc-js-xds 1.14 reads a per-channel bootstrap from (resolver-xds.js). */
export const XDS_BOOTSTRAP_OPTION = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";

let registered = false;

type Serializers = {
  readonly serialize: (value: unknown) => Buffer;
  readonly deserialize: (bytes: Buffer) => Empty | SimpleResponse;
  readonly request: () => unknown;
};

const SERIALIZERS: Record<RpcMethod, Serializers> = {
  EmptyCall: {
    serialize: (value) => Buffer.from(toBinary(EmptySchema, value as Empty)),
    deserialize: (bytes) => fromBinary(EmptySchema, bytes),
    request: () => create(EmptySchema),
  },
  UnaryCall: {
    serialize: (value) => Buffer.from(toBinary(SimpleRequestSchema, value as SimpleRequest)),
    deserialize: (bytes) => fromBinary(SimpleResponseSchema, bytes),
    request: () => create(SimpleRequestSchema, { fillServerId: true }),
  },
};

function createGrpcJsClient(target: string, bootstrapJson: string): InteropClient {
  if (!registered) {
    grpcJsXds.register();
    registered = true;
  }
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    [XDS_BOOTSTRAP_OPTION]: bootstrapJson,
  });
  const inFlight = new Set<grpc.ClientUnaryCall>();
  return {
    call(method: RpcMethod, options: CallOptions): Promise<CallOutcome> {
      const { serialize, deserialize, request } = SERIALIZERS[method];
      const metadata = new grpc.Metadata();
      for (const [key, value] of options.metadata) metadata.add(key, value);
      return new Promise((resolve) => {
        let headerPeer: string | undefined;
        const call = client.makeUnaryRequest(
          rpcPath(method),
          serialize,
          deserialize,
          request(),
          metadata,
          { deadline: Date.now() + options.timeoutMs },
          (error, response) => {
            inFlight.delete(call);
            if (error) {
              resolve({ ok: false, code: error.code, message: error.details });
              return;
            }
            const bodyPeer = response && "hostname" in response ? response.hostname : undefined;
            const peer = bodyPeer || headerPeer;
            resolve(peer === undefined ? { ok: true, code: 0 } : { ok: true, code: 0, peer });
          },
        );
        inFlight.add(call);
        call.on("metadata", (headers: grpc.Metadata) => {
          const value = headers.get(HOSTNAME_HEADER)[0];
          if (value !== undefined) headerPeer = value.toString();
        });
      });
    },
    async close() {
      for (const call of inFlight) call.cancel();
      client.close();
    },
  };
}

export const grpcJsXdsClientKind: InteropClientKind = {
  name: "grpc-js-xds",
  create: ({ target, bootstrap }) => createGrpcJsClient(target, JSON.stringify(bootstrap)),
  deadlineMayReadCancelled:
    "grpc-js-xds 1.14.1 ended a call past its deadline CANCELLED beside DEADLINE_EXCEEDED for the rest during busy " +
    "npm test runs: 1 of 20 in app_timeout_exceeded, 1 of 10 in timeout_exceeded (max_stream_duration); which race " +
    "in grpc-js does it is not established here",
  knownBugs: {
    circuit_breaking:
      "grpc-js-xds 1.14.1 counts a call against max_requests when the call starts, not when it is picked, so the " +
      "calls queued while the cluster connects all pass the check and the limit is overshot for good with keep-open calls",
    "fault_injection/max_active_faults_ends_with_call":
      "grpc-js-xds 1.14.1 keeps a delay fault active for its whole delay (5 s here) after the call it delayed ended " +
      "at its 1 s deadline (C-core and grpc-go end the fault with the call), so after the first delayed RPC it " +
      "delays none for 5 s; its blocks are checked for at most one delayed RPC, not at least one",
    "fault_injection/filter_update_without_route_update":
      "grpc-js-xds 1.14.1 applies a Listener's changed HTTP filter config only when the route configuration changes " +
      "too; the case then changes the route with each fault config",
    // Only in the ci profile: the full profile waits long enough.
    ...(process.env.XDSKIT_INTEROP_PROFILE === "full"
      ? {}
      : {
          weighted_round_robin:
            "grpc-js-xds 1.14.1 (GRPC_EXPERIMENTAL_XDS_WRR_LB) reached the weights only after about 35 s at load " +
            "average ~15, past the ci profile's 45 s wait at higher load; it runs in the full profile (300 s wait)",
        }),
  },
};
