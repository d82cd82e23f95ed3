import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type DynamicParameterConstraints,
  DynamicParameterConstraintsSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { ConstraintError, joinPath } from "./constraint-error.js";
import { and, type Expr, exists, not, or, TRUE, value } from "./expr.js";

/** Nesting deeper than this is refused: no legitimate variant needs it, and it bounds the recursion. */
export const MAX_PROTO_DEPTH = 100;

export interface FromProtoOptions {
  /** Prefix for error paths, e.g. `resources[3].resource_name.dynamic_parameter_constraints`. */
  readonly path?: string;
}

/**
 * The expression of an `envoy.service.discovery.v3.DynamicParameterConstraints`. An absent message (`undefined`,
 * as protobuf-es gives an unset field) means no constraints: `TRUE`. Throws a `ConstraintError` naming the field
 * path for a oneof left unset (`type` or `constraint_type`) or an empty `and_constraints`/`or_constraints` list:
 * TP2 leaves their meaning unspecified, so they are refused rather than guessed.
 */
export function fromProto(message: DynamicParameterConstraints | undefined, options: FromProtoOptions = {}): Expr {
  if (message === undefined) return TRUE;
  return convert(message, options.path ?? "", 0);
}

function convert(m: DynamicParameterConstraints, path: string, depth: number): Expr {
  if (depth > MAX_PROTO_DEPTH) throw new ConstraintError(`nested deeper than ${MAX_PROTO_DEPTH} levels`, { path });
  const t = m.type;
  switch (t.case) {
    case "constraint": {
      const here = joinPath(path, "constraint");
      const single = t.value;
      const ct = single.constraintType;
      if (ct.case === "value") return value(single.key, ct.value);
      if (ct.case === "exists") return exists(single.key);
      throw new ConstraintError("oneof constraint_type unset", { path: here });
    }
    case "andConstraints":
    case "orConstraints": {
      const field = t.case === "andConstraints" ? "and_constraints" : "or_constraints";
      const list = t.value.constraints;
      if (list.length === 0) throw new ConstraintError("empty list", { path: joinPath(path, `${field}.constraints`) });
      const children = list.map((c, i) => convert(c, joinPath(path, `${field}.constraints[${i}]`), depth + 1));
      return t.case === "andConstraints" ? and(children) : or(children);
    }
    case "notConstraints":
      return not(convert(t.value, joinPath(path, "not_constraints"), depth + 1));
    case undefined:
      throw new ConstraintError("oneof type unset", { path: path === "" ? "DynamicParameterConstraints" : path });
  }
}

/**
 * The merged API form of `expr`, or `undefined` for `TRUE` (no constraints: leave the field unset). A `TRUE` below
 * the top, or a draft-dialect `range`, has no merged API form and is a `ConstraintError`; canonicalize first to
 * remove redundant `TRUE`s. `fromProto(toProto(x))` equals `x` for every other expression.
 */
export function toProto(expr: Expr): DynamicParameterConstraints | undefined {
  if (expr.kind === "true") return undefined;
  return create(DynamicParameterConstraintsSchema, { type: encode(expr, "") });
}

type TypeOneof = NonNullable<MessageInitShape<typeof DynamicParameterConstraintsSchema>["type"]>;

function encode(e: Expr, path: string): TypeOneof {
  switch (e.kind) {
    case "true":
      throw new ConstraintError("TRUE below the top level has no DynamicParameterConstraints form", { path });
    case "range":
      throw new ConstraintError(`${JSON.stringify(e.key)} in [...]: integer ranges exist only in the TP2 draft`, {
        path,
      });
    case "value":
      return { case: "constraint", value: { key: e.key, constraintType: { case: "value", value: e.value } } };
    case "exists":
      return { case: "constraint", value: { key: e.key, constraintType: { case: "exists", value: {} } } };
    case "not":
      return { case: "notConstraints", value: { type: encode(e.child, joinPath(path, "not_constraints")) } };
    case "and":
    case "or": {
      const field = e.kind === "and" ? "and_constraints" : "or_constraints";
      const constraints = e.children.map((c, i) => ({ type: encode(c, joinPath(path, `${field}.constraints[${i}]`)) }));
      return { case: e.kind === "and" ? "andConstraints" : "orConstraints", value: { constraints } };
    }
  }
}
