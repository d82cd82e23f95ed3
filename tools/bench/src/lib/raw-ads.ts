// ADS over grpc-js with bytes in and out, for the control-plane benchmarks: the clients (grpc-js channels as
// grpc-js-xds uses them) and the baseline servers (no xDS logic).
import { fromBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

export type Protocol = "sotw" | "delta";

const SERVICE = "/envoy.service.discovery.v3.AggregatedDiscoveryService";
const PATHS = { sotw: `${SERVICE}/StreamAggregatedResources`, delta: `${SERVICE}/DeltaAggregatedResources` };
const identity = (bytes: Buffer): Buffer => bytes;

export interface RawAdsCall {
  readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  close(): void;
}

/** One ADS stream on a connection of its own (a local subchannel pool), as separate client processes would have. */
export function openRawAdsCall(address: string, protocol: Protocol): RawAdsCall {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  const call = client.makeBidiStreamRequest(PATHS[protocol], identity, identity);
  call.on("error", () => {
    // Cancelled at the end.
  });
  return {
    call,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

export type AdsRequest = DiscoveryRequest | DeltaDiscoveryRequest;
export type RawServerCall = grpc.ServerDuplexStream<AdsRequest, Buffer>;

/** A grpc-js server for one ADS method: requests decoded, responses written as given bytes. */
export async function serveRawAds(
  protocol: Protocol,
  onCall: (call: RawServerCall) => void,
): Promise<{ readonly address: string; close(): Promise<void> }> {
  const method = protocol === "sotw" ? "StreamAggregatedResources" : "DeltaAggregatedResources";
  const server = new grpc.Server();
  server.addService(
    {
      [method]: {
        path: PATHS[protocol],
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: (bytes: Buffer): AdsRequest =>
          protocol === "sotw"
            ? fromBinary(DiscoveryRequestSchema, bytes)
            : fromBinary(DeltaDiscoveryRequestSchema, bytes),
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      [method]: (call: RawServerCall) => {
        call.on("error", () => {});
        onCall(call);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: async () => {
      server.forceShutdown();
    },
  };
}
