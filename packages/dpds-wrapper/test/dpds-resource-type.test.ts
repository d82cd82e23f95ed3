// Decoding the DPDS resource: which constraints become parameters, and the errors (type and constraint named) for
// those that cannot. Decoding never throws.
import { create, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { fromText, toProto } from "@xdskit/constraint-matcher";
import { DynamicParameterConstraintsMapSchema } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import { DynamicParameterConstraintsSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DecodeContext } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DPDS_TYPE_URL, dpdsResourceType } from "../src/index.js";

const CDS = "envoy.config.cluster.v3.Cluster";
const LDS = "envoy.config.listener.v3.Listener";

/** A DPDS resource whose entries are written in the constraint text syntax ("" for an empty message). */
function dpds(entries: Record<string, string>): Any {
  const resourceTypeConstraints = Object.fromEntries(
    Object.entries(entries).map(([type, text]) => [
      type,
      text === "" ? create(DynamicParameterConstraintsSchema) : toProto(fromText(text))!,
    ]),
  );
  return anyPack(
    DynamicParameterConstraintsMapSchema,
    create(DynamicParameterConstraintsMapSchema, { resourceTypeConstraints }),
  );
}

// The DPDS decoder reads nothing from its context.
const context = {} as DecodeContext;
const decode = (any: Any) => dpdsResourceType.decode(any, context);

describe("the DPDS resource type", () => {
  it("is the DynamicParameterConstraintsMap type URL", () => {
    expect(dpdsResourceType.typeUrl).toBe(DPDS_TYPE_URL);
    expect(DPDS_TYPE_URL).toBe("type.googleapis.com/envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap");
    expect(dpdsResourceType.allResourcesRequiredInSotW).toBe(false);
  });

  it("turns key=value, alone or in a top-level and, into parameters per type", () => {
    const result = decode(dpds({ [CDS]: 'env="prod" && version="v2"', [LDS]: 'listener_type="direct"' }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.name).toBe("");
    expect(Object.fromEntries(result.value.parametersByType)).toEqual({
      [CDS]: { env: "prod", version: "v2" },
      [LDS]: { listener_type: "direct" },
    });
  });

  it("reads an empty map as no parameters for any type", () => {
    const result = decode(dpds({}));
    expect(result.ok && result.value.parametersByType.size).toBe(0);
  });

  it.each([
    [
      "exists",
      "exists(canary)",
      `resource_type_constraints["${CDS}"].constraint: exists(canary) cannot become a parameter`,
    ],
    [
      "or",
      'a="1" || b="2"',
      `resource_type_constraints["${CDS}"].or_constraints: a=1 || b=2 cannot become a parameter`,
    ],
    ["not", '!a="1"', `resource_type_constraints["${CDS}"].not_constraints: !a=1 cannot become a parameter`],
    [
      "nesting",
      'a="1" && (b="2" || c="3")',
      `resource_type_constraints["${CDS}"].and_constraints.constraints[1]: b=2 || c=3 cannot become a parameter`,
    ],
    [
      "two values for one key",
      'a="1" && a="2"',
      `resource_type_constraints["${CDS}"].and_constraints.constraints[1]: conflicting values for key "a"`,
    ],
    ["an unset oneof", "", `resource_type_constraints["${CDS}"]: oneof type unset`],
  ])("refuses %s, naming the type and the constraint", (_name, text, error) => {
    const result = decode(dpds({ [CDS]: text }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain(error);
    expect(result).not.toHaveProperty("name");
  });

  it("lists every bad entry, and refuses keys that are not message type names", () => {
    const result = decode(
      dpds({ [CDS]: "exists(x)", [`type.googleapis.com/${LDS}`]: 'a="1"', "": 'a="1"', [LDS]: 'ok="1"' }),
    );
    expect(result.ok ? "" : result.error.split("; ")).toEqual([
      'resource_type_constraints[""]: not a message type name (write envoy.config.cluster.v3.Cluster, with no type URL prefix)',
      `resource_type_constraints["${CDS}"].constraint: exists(x) cannot become a parameter: only key=value, alone or in a top-level and, can`,
      `resource_type_constraints["type.googleapis.com/${LDS}"]: not a message type name (write envoy.config.cluster.v3.Cluster, with no type URL prefix)`,
    ]);
  });

  it("never throws, whatever the bytes", () => {
    const valid = toBinary(
      DynamicParameterConstraintsMapSchema,
      create(DynamicParameterConstraintsMapSchema, { resourceTypeConstraints: { [CDS]: toProto(fromText('a="1"'))! } }),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          // Mutations of a valid resource reach deeper than random bytes.
          fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })).map(([i, b]) => {
            const copy = valid.slice();
            copy[i] = b;
            return copy;
          }),
        ),
        (bytes) => {
          const result = decode({ $typeName: "google.protobuf.Any", typeUrl: DPDS_TYPE_URL, value: bytes });
          expect(typeof result.ok).toBe("boolean");
          if (!result.ok) expect(result.error.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
