// A TypedStruct extension is read as protobuf-es reads any message (the package ships no generated schema for it,
// so it is described at runtime): the same UTF-8 check, the same merging of repeated fields, the same wire rules.
import { create, fromJson, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { AnySchema, StructSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { extractExtension } from "../../src/resources/extension.js";
import { ValidationErrors } from "../../src/resources/validation.js";

const TYPED_STRUCT = "type.googleapis.com/xds.type.v3.TypedStruct";

function extract(bytes: Uint8Array) {
  const errors = new ValidationErrors();
  const extension = extractExtension(create(AnySchema, { typeUrl: TYPED_STRUCT, value: bytes }), "config", errors);
  return { extension, errors: errors.toString() };
}

const struct = (json: Record<string, string | number>) => toBinary(StructSchema, fromJson(StructSchema, json));

describe("TypedStruct extensions", () => {
  it("unwrap into the inner type and its JSON value", () => {
    const bytes = new BinaryWriter()
      .tag(1, 2)
      .string("type.googleapis.com/a.B")
      .tag(2, 2)
      .bytes(struct({ k: "v" }));
    expect(extract(bytes.finish())).toEqual({
      extension: {
        type: "a.B",
        kind: "json",
        value: { k: "v" },
        path: "config.value[xds.type.v3.TypedStruct].value[a.B]",
      },
      errors: "",
    });
  });

  it("a type_url that is not UTF-8 does not parse", () => {
    const bytes = new Uint8Array([0x0a, 0x03, 0x61, 0x2f, 0xff]);
    expect(extract(bytes)).toEqual({
      extension: undefined,
      errors: "config.value[xds.type.v3.TypedStruct]: could not parse",
    });
  });

  it("a repeated value field merges into the first, as protobuf merges messages", () => {
    const bytes = new BinaryWriter()
      .tag(1, 2)
      .string("type.googleapis.com/a.B")
      .tag(2, 2)
      .bytes(struct({ first: 1 }))
      .tag(2, 2)
      .bytes(struct({ second: 2 }))
      .finish();
    expect(extract(bytes).extension).toMatchObject({ type: "a.B", value: { first: 1, second: 2 } });
  });

  it("a type_url sent with another wire type is read as a string all the same", () => {
    // Tag 0x08 (field 1, varint): protobuf-es reads a string whatever the wire type, so 0x01 is its length.
    const bytes = new Uint8Array([0x08, 0x01, 0x2f]);
    expect(extract(bytes).errors).toBe('config.value[xds.type.v3.TypedStruct].type_url: invalid value "/"');
  });

  it("a Struct number without a JSON form does not parse", () => {
    const nan = new BinaryWriter()
      .tag(1, 2)
      .fork()
      .string("n")
      .tag(2, 2)
      .fork()
      .tag(2, 1)
      .double(Number.NaN)
      .join()
      .join();
    const bytes = new BinaryWriter().tag(1, 2).string("type.googleapis.com/a.B").tag(2, 2).bytes(nan.finish()).finish();
    expect(extract(bytes).errors).toBe("config.value[xds.type.v3.TypedStruct]: could not parse");
  });
});
