// The DPDS resource (docs/decisions.md#the-dpds-resource) as an xds-client resource type: each entry of
// `resource_type_constraints` names the variant this client must get for one resource type, and becomes the
// parameters that select it. An entry that cannot be expressed as parameters makes the resource invalid, so the
// client NACKs it with the type and the constraint named.
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { ConstraintError, deriveParameters, type Expr, fromProto } from "@xdskit/constraint-matcher";
import { DynamicParameterConstraintsMapSchema } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { DecodeResult, ResourceType } from "@xdskit/xds-client";

export const DPDS_TYPE_URL = "type.googleapis.com/envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap";

/** A decoded DPDS resource. */
export interface DynamicParametersUpdate {
  /**
   * Per resource type, by full message name (`envoy.config.cluster.v3.Cluster`): the parameters to subscribe with.
   * Types without an entry get none from DPDS.
   */
  readonly parametersByType: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * `DynamicParameterConstraintsMap`. The message has no name field: servers send it wrapped in
 * `envoy.service.discovery.v3.Resource` (always so in delta; in SotW the wrapper's `name` or `resource_name`), and
 * the client names it from there. Decoding never throws.
 */
export const dpdsResourceType: ResourceType<DynamicParametersUpdate> = Object.freeze({
  typeUrl: DPDS_TYPE_URL,
  typeName: "DynamicParameterConstraintsMapResource",
  allResourcesRequiredInSotW: false,
  decode(any: Any): DecodeResult<DynamicParametersUpdate> {
    let constraintsByType: Record<string, Parameters<typeof fromProto>[0]>;
    try {
      constraintsByType = fromBinary(DynamicParameterConstraintsMapSchema, any.value).resourceTypeConstraints;
    } catch (error) {
      return { ok: false, error: `cannot decode DynamicParameterConstraintsMap: ${errorText(error)}` };
    }
    const errors: string[] = [];
    const parametersByType = new Map<string, Readonly<Record<string, string>>>();
    for (const typeName of Object.keys(constraintsByType).sort()) {
      const path = `resource_type_constraints[${JSON.stringify(typeName)}]`;
      if (typeName === "" || typeName.includes("/")) {
        errors.push(
          `${path}: not a message type name (write envoy.config.cluster.v3.Cluster, with no type URL prefix)`,
        );
        continue;
      }
      let expr: Expr;
      try {
        expr = fromProto(constraintsByType[typeName], { path });
      } catch (error) {
        errors.push(errorText(error));
        continue;
      }
      try {
        parametersByType.set(typeName, Object.freeze(deriveParameters(expr)));
      } catch (error) {
        if (!(error instanceof ConstraintError)) errors.push(`${path}: ${errorText(error)}`);
        else errors.push(`${error.path ? `${path}.${error.path}` : path}: ${error.reason}`);
      }
    }
    if (errors.length > 0) return { ok: false, error: errors.join("; ") };
    // The name comes from the Resource wrapper (see above); "" reaches no subscription.
    return { ok: true, name: "", value: Object.freeze({ parametersByType }) };
  },
});
