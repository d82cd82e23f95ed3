import type { DescMessage } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import type { Expr } from "@xdskit/constraint-matcher";
import type { ResourceName } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";

// What a resource set holds: for each type and name, one entry per variant (docs/decisions.md#serving-variants).

/**
 * A constrained variant's identity: its name and its constraints in canonical form. Two constraint sets with the
 * same canonical text are one variant. One object per variant for as long as the set holds it, shared by its
 * versions; an unconstrained resource has none.
 */
export interface VariantRef {
  readonly name: string;
  /** The canonical text of the constraints (`canonicalText` of `@xdskit/constraint-matcher`). */
  readonly text: string;
  /** The constraints, canonical. */
  readonly constraints: Expr;
  /** `resource_name { name, dynamic_parameter_constraints }` as responses, removals and errors carry it. */
  readonly resourceName: ResourceName;
}

interface EntryBase {
  readonly typeUrl: string;
  readonly name: string;
  readonly version: number;
  /** Undefined for the unconstrained variant (the only one a name has unless variants are published). */
  readonly variant: VariantRef | undefined;
  /** May overlap the name's other variants (checked when published). */
  readonly allowOverlap: boolean;
}

/** A served resource, packed once. */
export interface ResourceEntry extends EntryBase {
  readonly kind: "resource";
  /** The message's schema (undefined: the resource was given as an Any, and is served as is). */
  readonly schema: DescMessage | undefined;
  readonly any: Any;
  readonly wrap: boolean | undefined;
  /** Sent wrapped in `Resource` with `cache_control.do_not_cache`. */
  readonly doNotCache: boolean;
}

/** A TP3 error standing in for a resource (or for one variant of it). */
export interface ErrorEntry extends EntryBase {
  readonly kind: "error";
  readonly status: Status;
}

export type Entry = ResourceEntry | ErrorEntry;

/** How a variant reads in hook events and messages: its name, then its constraints in braces when it has some. */
export function entryLabel(entry: { readonly name: string; readonly variant: VariantRef | undefined }): string {
  return entry.variant ? `${entry.name}{${entry.variant.text}}` : entry.name;
}
