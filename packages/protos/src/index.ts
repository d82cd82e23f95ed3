// @xdskit/protos: the messages live under subpaths, e.g.
//   import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
// This entry point holds what spans every file.
import type { DescMessage } from "@bufbuild/protobuf";

export { allFiles, xdsRegistry } from "./gen/registry.js";

/** The `type.googleapis.com/` prefix xDS puts before a message's full name in type URLs. */
export const TYPE_URL_PREFIX = "type.googleapis.com/";

/** The type URL of a message schema, e.g. `type.googleapis.com/envoy.config.cluster.v3.Cluster`. */
export function typeUrlOf(schema: DescMessage): string {
  return TYPE_URL_PREFIX + schema.typeName;
}

/** The full message name in a type URL (the part after the last `/`). */
export function typeNameOfUrl(typeUrl: string): string {
  const slash = typeUrl.lastIndexOf("/");
  return slash < 0 ? typeUrl : typeUrl.slice(slash + 1);
}
