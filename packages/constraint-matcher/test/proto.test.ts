import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DynamicParameterConstraintsSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { equals, fromProto, fromText, matches, TRUE, toProto } from "../src/index.js";
import { ALL_SMALL_PARAMS, exprArb, ODD_STRINGS } from "./helpers.js";

const mergedExpr = exprArb({
  keys: ODD_STRINGS,
  values: ODD_STRINGS,
  maxBound: 0n,
  withRanges: false,
  withTrue: false,
});

describe("merged API dialect", () => {
  it("fromProto(toProto(x)) equals x, also through the wire encoding", () => {
    fc.assert(
      fc.property(mergedExpr, (e) => {
        const msg = toProto(e)!;
        expect(equals(fromProto(msg), e)).toBe(true);
        const wire = fromBinary(DynamicParameterConstraintsSchema, toBinary(DynamicParameterConstraintsSchema, msg));
        expect(equals(fromProto(wire), e)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("reads every member of both oneofs", () => {
    const msg = create(DynamicParameterConstraintsSchema, {
      type: {
        case: "orConstraints",
        value: {
          constraints: [
            { type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value: "prod" } } } },
            {
              type: {
                case: "andConstraints",
                value: {
                  constraints: [
                    {
                      type: { case: "constraint", value: { key: "v", constraintType: { case: "exists", value: {} } } },
                    },
                    {
                      type: {
                        case: "notConstraints",
                        value: {
                          type: {
                            case: "constraint",
                            value: { key: "c", constraintType: { case: "exists", value: {} } },
                          },
                        },
                      },
                    },
                  ],
                },
              },
            },
          ],
        },
      },
    });
    expect(fromProto(msg)).toEqual(fromText("env=prod || (exists(v) && !exists(c))"));
  });

  it("an absent message is no constraints, and no constraints is an absent message", () => {
    expect(fromProto(undefined)).toBe(TRUE);
    expect(toProto(TRUE)).toBeUndefined();
  });

  it("a single-child list reads as its child (same meaning)", () => {
    const msg = create(DynamicParameterConstraintsSchema, {
      type: {
        case: "andConstraints",
        value: {
          constraints: [
            { type: { case: "constraint", value: { key: "a", constraintType: { case: "value", value: "1" } } } },
          ],
        },
      },
    });
    const e = fromProto(msg);
    expect(e).toEqual(fromText("a=1"));
    expect(ALL_SMALL_PARAMS.filter((p) => matches(e, p)).length).toBeGreaterThan(0);
  });
});
