// Serving the DPDS resource from @xdskit/control-plane: a DynamicParameterConstraintsMap wrapped in `Resource` (it
// has no name field of its own), built from constraint text per type.
import { create } from "@bufbuild/protobuf";
import { fromText, toProto } from "@xdskit/constraint-matcher";
import type { ResourceSet } from "@xdskit/control-plane";
import { DynamicParameterConstraintsMapSchema } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { DynamicParameterConstraints } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

/** `constraints`: per type name, the constraints in the text syntax, e.g. `env="prod" && version="v2"`. */
export function dpdsMessage(constraints: Record<string, string>) {
  const resourceTypeConstraints: Record<string, DynamicParameterConstraints> = {};
  for (const [type, text] of Object.entries(constraints)) resourceTypeConstraints[type] = toProto(fromText(text))!;
  return create(DynamicParameterConstraintsMapSchema, { resourceTypeConstraints });
}

/** Serves the DPDS resource `name` on `set` (the server, or a node's scope). Returns its version. */
export function serveDpds(set: ResourceSet, name: string, constraints: Record<string, string>): string {
  return set.setResource(dpdsMessage(constraints), { name, wrap: true });
}
