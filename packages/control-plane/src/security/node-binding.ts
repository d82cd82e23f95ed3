import { equals } from "@bufbuild/protobuf";
import { type Node, NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { InvalidRequestError } from "../limits.js";

/**
 * A stream's node is the one of its first request, for good (docs/security.md#node-identity): a later request may
 * repeat it (Envoy does) or leave it out, but one that carries another node, or sets one the first did not, is
 * refused with INVALID_ARGUMENT. ADS and LRS streams alike.
 */
export function checkSameNode(streamNode: Node | undefined, node: Node | undefined): void {
  if (node === undefined || (streamNode !== undefined && equals(NodeSchema, node, streamNode))) return;
  throw new InvalidRequestError(
    streamNode === undefined
      ? "a stream's node goes in its first request: a later request cannot set it"
      : `a stream cannot change its node (from "${streamNode.id}" to "${node.id}")`,
  );
}
