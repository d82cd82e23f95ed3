import type { MessageShape } from "@bufbuild/protobuf";
import type {
  DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  DiscoveryResponse,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type EncodedBody, encodeBody } from "./encoded-response.js";

/** What a response says, short of the nonce: the message and the names its hook event lists. */
export interface ResponseParts {
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly resourceNames: readonly string[];
  readonly errorNames: readonly string[];
  /** Delta only: `removed_resources`. */
  readonly removedNames: readonly string[];
  /** The response (its nonce empty unless injected), as hooks report it. */
  readonly message: DiscoveryResponse | DeltaDiscoveryResponse;
}

/** A response built once for every stream that sends it: the message and its bytes are made on first use. */
export interface PreparedResponse extends ResponseParts {
  readonly body: EncodedBody;
}

type ResponseSchema = typeof DiscoveryResponseSchema | typeof DeltaDiscoveryResponseSchema;

export function prepareResponse<S extends ResponseSchema>(
  schema: S,
  parts: Omit<ResponseParts, "message">,
  build: () => MessageShape<S>,
): PreparedResponse {
  let message: MessageShape<S> | undefined;
  let body: EncodedBody | undefined;
  return {
    ...parts,
    get message() {
      message ??= build();
      return message;
    },
    get body() {
      body ??= encodeBody(schema, this.message as MessageShape<S>);
      return body;
    },
  };
}
