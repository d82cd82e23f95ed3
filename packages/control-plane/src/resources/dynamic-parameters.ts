import { create } from "@bufbuild/protobuf";
import { toProto } from "@xdskit/constraint-matcher";
import {
  type DynamicParameterConstraintsMap,
  DynamicParameterConstraintsMapSchema,
} from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { DynamicParameterConstraints } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type ConstraintsInput, readConstraints } from "./variant-group.js";

/**
 * What a DPDS resource says, per resource type: the constraints whose variant the node must get. Keys are message
 * names (`envoy.config.cluster.v3.Cluster`); a type URL is accepted and its `type.googleapis.com/` prefix dropped.
 */
export type DynamicParametersInit = Readonly<Record<string, ConstraintsInput>>;

/** The name the DPDS resource is served under unless `setDynamicParameters` is given another. */
export const DEFAULT_DYNAMIC_PARAMETERS_NAME = "dynamic-parameters";

const TYPE_URL_PREFIX = "type.googleapis.com/";

/**
 * Builds the DPDS resource, `envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap`
 * (docs/decisions.md#the-dpds-resource). Constraints go in canonical form; a type whose constraints are `true` (none)
 * is left out, as it adds no parameter. Clients turn `key=value` tests, alone or in a top-level `and`, into
 * parameters and NACK any other shape; this builder lets such shapes through, so tests can serve them.
 */
export function buildDynamicParameterConstraintsMap(init: DynamicParametersInit): DynamicParameterConstraintsMap {
  const resourceTypeConstraints: Record<string, DynamicParameterConstraints> = {};
  for (const [key, input] of Object.entries(init)) {
    const typeName = key.startsWith(TYPE_URL_PREFIX) ? key.slice(TYPE_URL_PREFIX.length) : key;
    if (typeName === "") throw new TypeError("buildDynamicParameterConstraintsMap: a resource type name is empty");
    if (Object.hasOwn(resourceTypeConstraints, typeName)) {
      throw new TypeError(`buildDynamicParameterConstraintsMap: ${typeName} is given twice`);
    }
    const proto = toProto(readConstraints(input, `dynamic parameters of ${typeName}`));
    if (proto !== undefined) resourceTypeConstraints[typeName] = proto;
  }
  return create(DynamicParameterConstraintsMapSchema, { resourceTypeConstraints });
}
