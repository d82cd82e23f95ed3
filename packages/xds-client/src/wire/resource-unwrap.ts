// A resource taken out of its `Resource` wrapper (SotW's optional wrapper, every delta resource) and named with its
// TP2 variant (A67's `resource_name` and its constraints), or the NACK line saying why it cannot be.
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { canonicalText, type Expr, fromProto, TRUE } from "@xdskit/constraint-matcher";
import {
  type DynamicParameterConstraints,
  type Resource,
  type ResourceName,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { XdsFeatures } from "../shared/features.js";
import { canonicalName } from "../shared/resource-name.js";
import { errorMessage } from "../shared/xds-error.js";
import type { HeldVariant } from "../state/resource-state.js";
import { UNCONSTRAINED, type VariantRef } from "./decoded-response.js";

export const RESOURCE_WRAPPER_TYPE_URL = "type.googleapis.com/envoy.service.discovery.v3.Resource";

/** A resource taken out of its `Resource` wrapper, or why it cannot be. */
export type Unwrapped =
  | {
      readonly any: Any;
      readonly name?: string;
      readonly constraints: Expr;
      readonly variant: HeldVariant;
      /** The wrapper it came in, for the decoder (`DecodeContext.wrapper`). */
      readonly wrapper?: Resource;
    }
  | { readonly error: string };

/** The constraints of a variant (TRUE for none, or when A67 is off). Throws ConstraintError when malformed. */
function readConstraints(message: DynamicParameterConstraints | undefined, features: XdsFeatures): Expr {
  if (message === undefined || !features.dynamicParameters) return TRUE;
  return fromProto(message, { path: "resource_name.dynamic_parameter_constraints" });
}

function variantOf(constraints: Expr, resourceName: ResourceName | undefined): HeldVariant {
  if (constraints.kind === "true" || resourceName === undefined) return UNCONSTRAINED;
  return Object.freeze({ key: canonicalText(constraints), resourceName });
}

/** A `Resource` (a SotW wrapper or a delta resource) whose payload must be of `typeUrl`. */
export function unwrapResource(wrapper: Resource, typeUrl: string, features: XdsFeatures): Unwrapped {
  const inner = wrapper.resource;
  if (!inner) return { error: "the Resource holds no resource" };
  if (inner.typeUrl !== typeUrl) return { error: `type URL ${inner.typeUrl} does not match the response's ${typeUrl}` };
  // A67: with dynamic parameters on, `resource_name` (when set) names the resource and carries its constraints;
  // off, it is ignored and `name` names the resource.
  const resourceName = features.dynamicParameters ? wrapper.resourceName : undefined;
  if (resourceName !== undefined && resourceName.name !== "") {
    try {
      const constraints = readConstraints(resourceName.dynamicParameterConstraints, features);
      return {
        any: inner,
        name: resourceName.name,
        constraints,
        variant: variantOf(constraints, resourceName),
        wrapper,
      };
    } catch (error) {
      return { error: `${resourceName.name}: ${errorMessage(error)}` };
    }
  }
  return wrapper.name === ""
    ? { any: inner, constraints: TRUE, variant: UNCONSTRAINED, wrapper }
    : { any: inner, name: wrapper.name, constraints: TRUE, variant: UNCONSTRAINED, wrapper };
}

/** A SotW entry: a resource of `typeUrl`, or one wrapped in `Resource`. */
export function unwrapAny(any: Any, typeUrl: string, features: XdsFeatures): Unwrapped {
  if (any.typeUrl !== RESOURCE_WRAPPER_TYPE_URL) {
    if (any.typeUrl !== typeUrl) return { error: `type URL ${any.typeUrl} does not match the response's ${typeUrl}` };
    return { any, constraints: TRUE, variant: UNCONSTRAINED };
  }
  let wrapper: Resource;
  try {
    wrapper = fromBinary(ResourceSchema, any.value);
  } catch (error) {
    return { error: `cannot decode the Resource wrapper: ${errorMessage(error)}` };
  }
  return unwrapResource(wrapper, typeUrl, features);
}

/** A variant named by a `ResourceName` (a removal, an error), or the NACK line saying why it cannot be read. */
export function readVariantRef(
  resourceName: ResourceName | undefined,
  features: XdsFeatures,
): VariantRef | { readonly error: string } {
  const name = resourceName?.name ?? "";
  try {
    const constraints = readConstraints(resourceName?.dynamicParameterConstraints, features);
    return { name: canonicalName(name), constraints, variant: variantOf(constraints, resourceName) };
  } catch (error) {
    return { error: `${name}: ${errorMessage(error)}` };
  }
}
