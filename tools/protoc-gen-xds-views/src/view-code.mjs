// The pieces of one generated file's code: its imports (the runtime, the wire reader, protoc-gen-es's schemas and
// shapes, the views of other files), and a view's TypeScript shape: each property's type, whether it is optional,
// its zero value, and the code reading one value of a field.
import { ScalarType } from "@bufbuild/protobuf";
import { pbModule, scalarRead, scalarType, scalarZero, shapeName, WRAPPERS } from "./proto-types.mjs";

/**
 * The code helpers of the generated file `f` (the views of `file`). protoplugin takes relative import paths as
 * relative to the output root and rewrites them for each file.
 */
export function createViewCode(f, file, runtimePath) {
  const rt = (name, typeOnly = false) => f.import(name, runtimePath, typeOnly);
  const wire = (name) => f.import(name, "@bufbuild/protobuf/wire");
  const schemaOf = (desc) => f.import(`${shapeName(desc)}Schema`, pbModule(desc));
  const viewOf = (desc) =>
    desc.file === file
      ? `${shapeName(desc)}View`
      : f.import(`${shapeName(desc)}View`, `./${desc.file.name}_view.js`, true);
  const readerOf = (desc) =>
    desc.file === file ? `read${shapeName(desc)}` : f.import(`read${shapeName(desc)}`, `./${desc.file.name}_view.js`);
  const newOf = (desc) =>
    desc.file === file
      ? `new${shapeName(desc)}View`
      : f.import(`new${shapeName(desc)}View`, `./${desc.file.name}_view.js`);
  const enumType = (desc) => f.import(shapeName(desc), pbModule(desc), true);
  const shapeType = (desc) => f.import(shapeName(desc), pbModule(desc), true);

  /** Code reading a scalar: `scalarRead`, with UTF-8-checked strings read by the runtime's `readString`. */
  const scalarCode = (scalar, utf8, asString) =>
    scalar === ScalarType.STRING && utf8 ? [rt("readString"), "(reader)"] : [scalarRead(scalar, utf8, asString)];

  /** A zero value's code: a literal, or the runtime's empty bytes. */
  const zeroCode = (code) => (code === "NO_BYTES" ? rt("NO_BYTES") : code);

  /** The TS type of one value of `field` (a list item or map value for those kinds). */
  function valueType(field) {
    if (field.message !== undefined) {
      const wrapper = field.fieldKind === "message" && !field.oneof ? WRAPPERS[field.message.typeName] : undefined;
      return wrapper ? wrapper[0] : viewOf(field.message);
    }
    if (field.enum !== undefined) return enumType(field.enum);
    return scalarType(field.scalar ?? ScalarType.INT32, field.longAsString);
  }

  function fieldType(plan) {
    if (plan.kind === "oneof") {
      const cases = plan.oneof.fields.map((m) =>
        plan.kept.has(m)
          ? [`{ case: "${m.localName}"; value: `, valueType(m), " }"]
          : [`{ case: "${m.localName}"; value?: unknown }`],
      );
      return [...cases.flatMap((c) => [...c, " | "]), "{ case: undefined; value?: undefined }"];
    }
    const field = plan.field;
    if (plan.kind === "derived") return [plan.derive.type];
    if (plan.kind === "protobuf-es") return [shapeType(field.parent), `["${field.localName}"]`];
    switch (field.fieldKind) {
      case "list":
        return ["readonly ", valueType(field), "[]"];
      case "map":
        return ["{ [key: string]: ", valueType(field), " }"];
      case "message":
        return [valueType(field), " | undefined"];
      default:
        return field.proto.proto3Optional ? [valueType(field), " | undefined"] : [valueType(field)];
    }
  }

  function optional(plan) {
    if (plan.kind === "oneof" || plan.kind === "derived") return false;
    const field = plan.field;
    if (plan.kind === "protobuf-es") return field.fieldKind === "message";
    return (
      field.fieldKind === "message" ||
      (field.fieldKind !== "list" && field.fieldKind !== "map" && field.proto.proto3Optional)
    );
  }

  function zero(plan) {
    if (plan.kind === "oneof") return rt("NO_CASE");
    if (plan.kind === "derived") return plan.derive.zero;
    const field = plan.field;
    if (field.fieldKind === "list") return rt("NO_ITEMS");
    if (field.fieldKind === "map") return rt("NO_ENTRIES");
    if (optional(plan)) return "undefined";
    if (field.fieldKind === "enum") return "0";
    return zeroCode(scalarZero(field.scalar, field.longAsString));
  }

  /** Code reading one value of `field` at the reader (a list item, a map value, a oneof member). */
  function readValue(field, previous) {
    if (field.message !== undefined) {
      const wrapper = field.fieldKind === "message" && !field.oneof ? WRAPPERS[field.message.typeName] : undefined;
      if (wrapper) {
        return [
          rt("readWrapper"),
          "(reader, depth + 1, ",
          schemaOf(field.message),
          `, ${previous}, `,
          zeroCode(wrapper[1]),
          `, (reader) => ${wrapper[2]})`,
        ];
      }
      return [readerOf(field.message), `(reader, reader.uint32(), depth + 1, ${previous})`];
    }
    if (field.enum !== undefined) return ["reader.int32()"];
    return scalarCode(field.scalar ?? ScalarType.INT32, field.utf8Validation, field.longAsString);
  }

  return {
    f,
    rt,
    wire,
    schemaOf,
    readerOf,
    newOf,
    scalarCode,
    zeroCode,
    valueType,
    fieldType,
    optional,
    zero,
    readValue,
  };
}
