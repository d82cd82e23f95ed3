import { create } from "@bufbuild/protobuf";
import { DynamicParameterConstraintsSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, it } from "vitest";
import {
  and,
  ConstraintError,
  type DraftConstraints,
  deriveParameters,
  fromDraft,
  fromProto,
  fromText,
  or,
  range,
  toProto,
  value,
} from "../src/index.js";

function errorOf(f: () => unknown): ConstraintError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConstraintError);
    return e as ConstraintError;
  }
  throw new Error("expected a ConstraintError");
}

describe("text errors name the column", () => {
  const cases: [string, number, string][] = [
    ["", 1, "expected a constraint, found the end of the text"],
    ["env=", 5, "expected a bare word or a"],
    ["env=prod &&", 12, "expected a constraint"],
    ["env=prod && (version=v1", 24, 'expected ")"'],
    ["env prod", 5, 'expected "=", "!=" or "in" after key "env"'],
    ["env=prod version=v1", 10, 'expected "&&", "||" or the end'],
    ['env="prod', 5, "unterminated quoted string"],
    ['env="a\\qb"', 7, "bad escape"],
    ["shard in [5..1]", 11, "range 5..1 has min > max"],
    ["shard in []", 11, "expected an unsigned integer"],
    ["shard in [1..2", 15, 'expected "]"'],
    ["n in [18446744073709551616]", 7, "exceeds the uint64 maximum"],
    ["true=1", 1, '"true" is a reserved word'],
    ["in in [1]", 1, '"in" is a reserved word'],
    ["exists canary", 8, 'expected "("'],
    ["a=1 & b=2", 5, 'expected "&&", "||" or the end'],
  ];
  it.each(cases)("%j fails at column %i", (text, column, reason) => {
    const e = errorOf(() => fromText(text));
    expect(e.column).toBe(column);
    expect(e.reason).toContain(reason);
    expect(e.message).toMatch(new RegExp(`^column ${column}: `));
  });
});

describe("proto errors name the field path", () => {
  // and(a=1, <second>, {key: "c", constraint_type unset})
  const listWith = (second: object) =>
    create(DynamicParameterConstraintsSchema, {
      type: {
        case: "andConstraints",
        value: {
          constraints: [
            { type: { case: "constraint", value: { key: "a", constraintType: { case: "value", value: "1" } } } },
            second,
            { type: { case: "constraint", value: { key: "c" } } },
          ],
        },
      },
    });
  const unsetSingle = listWith({ type: { case: "notConstraints", value: {} } });
  it("a oneof constraint_type left unset", () => {
    const msg = listWith({
      type: { case: "constraint", value: { key: "b", constraintType: { case: "exists", value: {} } } },
    });
    expect(errorOf(() => fromProto(msg)).message).toBe(
      "and_constraints.constraints[2].constraint: oneof constraint_type unset",
    );
  });
  it("a oneof type left unset, nested and at the top", () => {
    expect(errorOf(() => fromProto(unsetSingle)).message).toBe(
      "and_constraints.constraints[1].not_constraints: oneof type unset",
    );
    expect(errorOf(() => fromProto(create(DynamicParameterConstraintsSchema))).message).toBe(
      "DynamicParameterConstraints: oneof type unset",
    );
    expect(
      errorOf(() => fromProto(create(DynamicParameterConstraintsSchema), { path: "resources[3].resource_name" }))
        .message,
    ).toBe("resources[3].resource_name: oneof type unset");
  });
  it("an empty and/or list", () => {
    const empty = create(DynamicParameterConstraintsSchema, {
      type: { case: "notConstraints", value: { type: { case: "orConstraints", value: { constraints: [] } } } },
    });
    expect(errorOf(() => fromProto(empty)).message).toBe("not_constraints.or_constraints.constraints: empty list");
  });
  it("nesting deeper than the limit", () => {
    let m = create(DynamicParameterConstraintsSchema, {
      type: { case: "constraint", value: { key: "a", constraintType: { case: "value", value: "1" } } },
    });
    for (let i = 0; i < 150; i++)
      m = create(DynamicParameterConstraintsSchema, { type: { case: "notConstraints", value: m } });
    expect(errorOf(() => fromProto(m)).reason).toBe("nested deeper than 100 levels");
  });
  it("ranges and nested TRUE have no merged API form", () => {
    expect(errorOf(() => toProto(and([value("a", "1"), range("s", [1n, 2n])]))).message).toBe(
      'and_constraints.constraints[1]: "s" in [...]: integer ranges exist only in the TP2 draft',
    );
    expect(errorOf(() => toProto(or([value("a", "1"), fromText("true")]))).path).toBe("or_constraints.constraints[1]");
  });
});

describe("IR and draft errors", () => {
  it("constructors refuse empty lists and bad ranges", () => {
    expect(errorOf(() => and([])).message).toContain("and() needs at least one child");
    expect(errorOf(() => or([])).message).toContain("or() needs at least one child");
    expect(errorOf(() => range("s")).message).toContain("needs at least one [min, max]");
    expect(errorOf(() => range("s", [5n, 1n])).message).toContain("min 5 > max 1");
    expect(errorOf(() => range("s", [0n, 2n ** 64n])).message).toContain("bounds must lie in");
  });
  const draftCases: [string, unknown, string][] = [
    ["empty constraint list", { env: { constraints: [] } }, 'key_constraints["env"].constraints: empty list'],
    ["oneof unset", { env: { constraints: [{}] } }, 'key_constraints["env"].constraints[0]: oneof constraint unset'],
    [
      "both members set",
      { env: { constraints: [{ value: "a", integer_range_list: [] }] } },
      'key_constraints["env"].constraints[0]: both value and integer_range_list set',
    ],
    [
      "min > max",
      {
        s: {
          constraints: [{ value: "1" }, { integer_range_list: [{ min_value: 1 }, { min_value: 9, max_value: 3 }] }],
        },
      },
      'key_constraints["s"].constraints[1].integer_range_list[1]: min_value 9 > max_value 3',
    ],
    [
      "no bound",
      { s: { constraints: [{ integer_range_list: [{ range: {} }] }] } },
      'key_constraints["s"].constraints[0].integer_range_list[0]: at least one of min_value and max_value must be set',
    ],
    [
      "not a uint64",
      { s: { constraints: [{ integer_range_list: [{ max_value: -1 }] }] } },
      'key_constraints["s"].constraints[0].integer_range_list[0].max_value: not a uint64: -1',
    ],
    ["empty range list", { s: { constraints: [{ integer_range_list: [] }] } }, "integer_range_list: empty list"],
  ];
  it.each(draftCases)("draft: %s", (_name, draft, message) => {
    expect(errorOf(() => fromDraft(draft as DraftConstraints)).message).toContain(message);
  });
  it("deriveParameters names the part it cannot turn into parameters", () => {
    expect(errorOf(() => deriveParameters(fromText("a=1 && exists(canary)"))).message).toBe(
      "and_constraints.constraints[1]: exists(canary) cannot become a parameter: only key=value, alone or in a top-level and, can",
    );
    expect(errorOf(() => deriveParameters(fromText("a=1 || b=2"))).path).toBe("or_constraints");
    expect(errorOf(() => deriveParameters(fromText("!a=1"))).path).toBe("not_constraints");
    expect(errorOf(() => deriveParameters(fromText("a=1 && (b=2 && c=3)"))).path).toBe(
      "and_constraints.constraints[1]",
    );
    expect(errorOf(() => deriveParameters(fromText("a=1 && b=2 && a=3"))).message).toBe(
      'and_constraints.constraints[2]: conflicting values for key "a": "1" and "3"',
    );
  });
});
