import type { Any } from "@bufbuild/protobuf/wkt";
import type { Resource } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Bootstrap, XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { XdsFeatures } from "../shared/features.js";

/** What a decoder may consult besides the bytes: who sent the resource, the bootstrap, the feature switches. */
export interface DecodeContext {
  /** The server the resource came from (`self` config sources resolve to it). */
  readonly server: XdsServerConfig;
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  /**
   * The `Resource` the resource came wrapped in (every delta resource; a SotW one only when wrapped), for decoders
   * that pass resources on rather than use them (a caching relay reads `resource_name` and `cache_control` here).
   * Undefined for a bare resource.
   */
  readonly wrapper?: Resource;
}

/**
 * The outcome of decoding one resource. Decoders never throw: a failure names the resource when its name could be
 * read, so the client can NACK it and tell its watchers, and lists every problem found (`; `-separated, each
 * prefixed with the field path, e.g. `virtual_hosts[2].routes[0].match: no path specifier`).
 */
export type DecodeResult<T> =
  | { readonly ok: true; readonly name: string; readonly value: T }
  | { readonly ok: false; readonly name?: string; readonly error: string };

/**
 * A resource type is data: the client is generic over it. LDS, RDS, CDS and EDS are registered like any user type.
 */
export interface ResourceType<T> {
  /** Full type URL, `type.googleapis.com/<message full name>`. */
  readonly typeUrl: string;
  /** Short name for logs and metrics, e.g. `ListenerResource`. */
  readonly typeName: string;
  /** SotW: a response that omits a cached resource of this type means it was deleted (LDS, CDS). */
  readonly allResourcesRequiredInSotW: boolean;
  /**
   * False when `decode` never reads `context.wrapper`: the client may then leave it out, and read a plain delta
   * resource without making its `Resource` message (the built-in types). Absent or true: every wrapped resource is
   * decoded with its wrapper.
   */
  readonly usesWrapper?: boolean;
  /** Decodes and validates one resource (the `Resource` wrapper, if any, already removed). */
  decode(resource: Any, context: DecodeContext): DecodeResult<T>;
}
