// A response of either ADS protocol, decoded into one protocol-neutral shape. The calls (sotw-call.ts, delta-call.ts)
// produce a DecodedResponse with what both protocols share: unwrapping `Resource` (resource-unwrap.ts), reading each
// entry's `Any` (any-reader.ts), decoding each entry once per distinct bytes in SotW (entry-outcome.ts), TP3
// `resource_errors` (resource-errors.ts); the cache applies it; the call ACKs or NACKs it (nack-detail.ts).
import type { Expr } from "@xdskit/constraint-matcher";
import type { XdsFeatures } from "../shared/features.js";
import type { StatusCode } from "../shared/xds-error.js";
import type { HeldVariant } from "../state/resource-state.js";
import type { DecodeContext, ResourceType } from "./resource-type.js";

/** The variant of a resource sent without constraints. */
export const UNCONSTRAINED: HeldVariant = Object.freeze({ key: "" });

/** One resource of a response, decoded and named. */
export interface DecodedResource {
  /** Canonical (`canonicalName`). */
  readonly name: string;
  readonly constraints: Expr;
  readonly variant: HeldVariant;
  /** Whether it decoded and validated: then `value` is the update; else `detail` says why not. */
  readonly ok: boolean;
  readonly value: unknown;
  readonly detail: string | undefined;
  /**
   * The value of the resource's `Any` as received (wrapper removed), one character per byte (resource-bytes.ts); its
   * type URL is the response's.
   */
  readonly bytes: string;
  /** Delta: the resource's own version. */
  readonly version: string | undefined;
}

/** A removal (delta) or a TP3 error: a name, and the variant it is about. */
export interface VariantRef {
  readonly name: string;
  readonly constraints: Expr;
  readonly variant: HeldVariant;
}

export interface DecodedResourceError extends VariantRef {
  readonly code: StatusCode;
  readonly message: string;
}

export interface DecodedResponse {
  readonly typeUrl: string;
  readonly type: ResourceType<unknown>;
  /** SotW `version_info`; delta `system_version_info`. */
  readonly version: string;
  readonly nonce: string;
  /** SotW: the response lists the whole state of the type (an omitted LDS/CDS resource is deleted). */
  readonly stateOfTheWorld: boolean;
  readonly resources: DecodedResource[];
  readonly removals: VariantRef[];
  readonly resourceErrors: DecodedResourceError[];
  /** Every problem found, one line each of the NACK; empty: the response is ACKed. */
  readonly errors: string[];
  /** A78 validity counts: resources that decoded, and those that did not (TP3 errors included). */
  valid: number;
  invalid: number;
}

export function emptyResponse(
  typeUrl: string,
  type: ResourceType<unknown>,
  version: string,
  nonce: string,
  stateOfTheWorld: boolean,
): DecodedResponse {
  return {
    typeUrl,
    type,
    version,
    nonce,
    stateOfTheWorld,
    resources: [],
    removals: [],
    resourceErrors: [],
    errors: [],
    valid: 0,
    invalid: 0,
  };
}

/** What decoding depends on besides the bytes. */
export interface DecodeSettings {
  readonly features: XdsFeatures;
  readonly context: DecodeContext;
}
