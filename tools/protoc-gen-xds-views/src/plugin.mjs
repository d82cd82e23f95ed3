// protoc-gen-xds-views: writes wire views, readers that decode only the fields a decoder reads straight from the
// bytes, for the messages a config file names (packages/xds-client/views.json). See README.md for what a view is and
// the rules of protobuf-es's `fromBinary` each reader follows.
import { readFileSync } from "node:fs";
import { ScalarType } from "@bufbuild/protobuf";
import { createEcmaScriptPlugin } from "@bufbuild/protoplugin";

/** Wrapper messages protobuf-es unboxes in a singular field: their view type, zero value and value reader. */
const WRAPPERS = {
  "google.protobuf.DoubleValue": ["number", "0", "reader.double()"],
  "google.protobuf.FloatValue": ["number", "0", "reader.float()"],
  "google.protobuf.Int64Value": ["bigint", "0n", "reader.int64() as bigint"],
  "google.protobuf.UInt64Value": ["bigint", "0n", "reader.uint64() as bigint"],
  "google.protobuf.Int32Value": ["number", "0", "reader.int32()"],
  "google.protobuf.UInt32Value": ["number", "0", "reader.uint32()"],
  "google.protobuf.BoolValue": ["boolean", "false", "reader.bool()"],
  "google.protobuf.StringValue": ["string", '""', "reader.string(true)"],
  "google.protobuf.BytesValue": ["Uint8Array", "NO_BYTES", "reader.bytes()"],
};

/** Messages protobuf-es represents as JSON in a field: a view keeps them only as protobuf-es's own value. */
const JSON_TYPES = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

const SCALARS = {
  [ScalarType.DOUBLE]: ["number", "0", "reader.double()"],
  [ScalarType.FLOAT]: ["number", "0", "reader.float()"],
  [ScalarType.INT64]: ["bigint", "0n", "(reader.int64() as bigint)"],
  [ScalarType.UINT64]: ["bigint", "0n", "(reader.uint64() as bigint)"],
  [ScalarType.INT32]: ["number", "0", "reader.int32()"],
  [ScalarType.FIXED64]: ["bigint", "0n", "(reader.fixed64() as bigint)"],
  [ScalarType.FIXED32]: ["number", "0", "reader.fixed32()"],
  [ScalarType.BOOL]: ["boolean", "false", "reader.bool()"],
  [ScalarType.STRING]: ["string", '""', "reader.string(UTF8)"],
  [ScalarType.BYTES]: ["Uint8Array", "NO_BYTES", "reader.bytes()"],
  [ScalarType.UINT32]: ["number", "0", "reader.uint32()"],
  [ScalarType.SFIXED32]: ["number", "0", "reader.sfixed32()"],
  [ScalarType.SFIXED64]: ["bigint", "0n", "(reader.sfixed64() as bigint)"],
  [ScalarType.SINT32]: ["number", "0", "reader.sint32()"],
  [ScalarType.SINT64]: ["bigint", "0n", "(reader.sint64() as bigint)"],
};

const LONGS = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
  ScalarType.SINT64,
]);

function fail(message) {
  throw new Error(`protoc-gen-xds-views: ${message}`);
}

/** The identifier protoc-gen-es gives a message or enum (nested names joined by `_`). */
function shapeName(desc) {
  const pkg = desc.file.proto.package;
  return (pkg === "" ? desc.typeName : desc.typeName.slice(pkg.length + 1)).replaceAll(".", "_");
}

/** Where protoc-gen-es's output for a descriptor is imported from. */
function pbModule(desc) {
  const file = desc.file.proto.name;
  return file.startsWith("google/protobuf/")
    ? "@bufbuild/protobuf/wkt"
    : `@xdskit/protos/${file.replace(/\.proto$/, "")}_pb`;
}

/** `scalar` read as protobuf-es reads it (`utf8`: the field's UTF-8 check; `asString`: a 64-bit `jstype` string). */
function scalarRead(scalar, utf8, asString) {
  const read = SCALARS[scalar][2].replace("UTF8", String(utf8));
  return asString && LONGS.has(scalar) ? `String(${read})` : read;
}

function scalarType(scalar, asString) {
  return asString && LONGS.has(scalar) ? "string" : SCALARS[scalar][0];
}

function scalarZero(scalar, asString) {
  return asString && LONGS.has(scalar) ? '"0"' : SCALARS[scalar][1];
}

/**
 * The plan: for each kept message, its fields as the config lists them. `messages` maps a full message name to field
 * names (a oneof's name keeps only which member is set); `protobufEs` lists full field names kept as protobuf-es's
 * own value; `derived` maps a full field name to a hand-written reader that keeps one value computed from the field
 * (`{ property, type, zero, read, from }`).
 */
function readConfig(path, registry) {
  const config = JSON.parse(readFileSync(path, "utf8"));
  const asMessage = new Set(config.protobufEs ?? []);
  const derived = new Map(Object.entries(config.derived ?? {}));
  const kept = new Map();
  for (const [typeName, names] of Object.entries(config.messages)) {
    const desc = registry.get(typeName);
    if (desc === undefined || desc.kind !== "message") fail(`views.json names an unknown message ${typeName}`);
    kept.set(desc, new Set(names));
  }
  const plans = new Map();
  for (const [desc, names] of kept) {
    for (const name of names) {
      if (!desc.fields.some((f) => f.name === name) && !desc.oneofs.some((o) => o.name === name)) {
        fail(`${desc.typeName} has no field or oneof ${name}`);
      }
    }
    const fields = [];
    for (const member of desc.members) {
      if (member.kind === "oneof") {
        const keptMembers = member.fields.filter((f) => names.has(f.name));
        if (!names.has(member.name) && keptMembers.length === 0) continue;
        for (const f of member.fields) if (names.has(f.name)) checkField(f, kept, false);
        fields.push({ kind: "oneof", oneof: member, kept: new Set(keptMembers) });
        continue;
      }
      if (!names.has(member.name)) continue;
      const derive = derived.get(`${desc.typeName}.${member.name}`);
      if (derive !== undefined) {
        if (member.oneof !== undefined) fail(`${desc.typeName}.${member.name}: a oneof member cannot be derived`);
        for (const key of ["property", "type", "zero", "read", "from"]) {
          if (typeof derive[key] !== "string") fail(`derived ${desc.typeName}.${member.name} needs "${key}"`);
        }
        fields.push({ kind: "derived", field: member, derive });
        continue;
      }
      if (asMessage.has(`${desc.typeName}.${member.name}`)) {
        if (member.oneof !== undefined) fail(`${desc.typeName}.${member.name}: a oneof member cannot be protobuf-es's`);
        fields.push({ kind: "protobuf-es", field: member });
        continue;
      }
      checkField(member, kept, true);
      fields.push({ kind: "field", field: member });
    }
    plans.set(desc, fields);
  }
  for (const name of derived.keys()) {
    const dot = name.lastIndexOf(".");
    const desc = registry.get(name.slice(0, dot));
    if (desc === undefined || !kept.get(desc)?.has(name.slice(dot + 1))) fail(`derived ${name} is not a kept field`);
  }
  return { plans, roots: new Set(config.roots ?? []) };
}

/** A kept field must be readable as a view: its message type kept too, no group encoding, no closed enum. */
function checkField(field, kept, unboxes) {
  const where = `${field.parent.typeName}.${field.name}`;
  if (field.fieldKind !== "map" && field.delimitedEncoding) fail(`${where}: group encoding is not supported`);
  const enumDesc = field.enum;
  if (enumDesc !== undefined && !enumDesc.open) fail(`${where}: closed enums are not supported`);
  const message = field.message;
  if (message === undefined) return;
  if (JSON_TYPES.has(message.typeName)) fail(`${where}: list it in "protobufEs" (protobuf-es reads it as JSON)`);
  if (unboxes && field.fieldKind === "message" && WRAPPERS[message.typeName] !== undefined) return;
  if (!kept.has(message)) fail(`${where} is kept but its type ${message.typeName} is not`);
}

/** Generates the views of one proto file. */
function generateFile(schema, file, plans, roots, runtimePath) {
  const messages = [...plans.keys()].filter((desc) => desc.file === file);
  if (messages.length === 0) return;
  const outName = `${file.name}_view.ts`;
  const f = schema.generateFile(outName);
  f.preamble(file);
  // protoplugin takes relative import paths as relative to the output root and rewrites them for each file.
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

  function readField(plan, desc) {
    if (plan.kind === "oneof") {
      const out = [];
      for (const m of plan.oneof.fields) {
        const prop = `view.${plan.oneof.localName}`;
        if (!plan.kept.has(m)) {
          out.push(
            `      case ${m.number}:\n        `,
            rt("walkField"),
            "(reader, ",
            schemaOf(desc),
            `, ${m.number}, tag & 7, depth);\n        ${prop} = { case: "${m.localName}", value: undefined };\n        break;\n`,
          );
          continue;
        }
        const previous =
          m.message === undefined ? "undefined" : `${prop}.case === "${m.localName}" ? ${prop}.value : undefined`;
        out.push(
          `      case ${m.number}:\n        ${prop} = { case: "${m.localName}", value: `,
          ...readValue(m, previous),
          " };\n        break;\n",
        );
      }
      return out;
    }
    const field = plan.field;
    const prop = `view.${field.localName}`;
    const head = `      case ${field.number}:\n        `;
    const block = `      case ${field.number}: {\n        `;
    if (plan.kind === "derived") {
      const derivedProp = `view.${plan.derive.property}`;
      return [
        head,
        `${derivedProp} = `,
        f.import(plan.derive.read, plan.derive.from),
        "(reader, ",
        schemaOf(desc),
        `, ${field.number}, tag & 7, depth, ${derivedProp});\n        break;\n`,
      ];
    }
    if (plan.kind === "protobuf-es") {
      return [
        head,
        `${prop} = `,
        rt("readAsMessage"),
        "(reader, ",
        schemaOf(desc),
        `, ${field.number}, tag & 7, depth, tagStart, "${field.localName}", ${prop});\n        break;\n`,
      ];
    }
    switch (field.fieldKind) {
      case "list": {
        const item = valueType(field);
        const items = [
          `const items = (${prop} === `,
          rt("NO_ITEMS"),
          ` ? (${prop} = []) : ${prop}) as `,
          item,
          "[];\n        ",
        ];
        const scalar = field.listKind === "message" ? undefined : (field.scalar ?? ScalarType.INT32);
        if (scalar === undefined || scalar === ScalarType.STRING || scalar === ScalarType.BYTES) {
          return [block, ...items, "items.push(", ...readValue(field, "undefined"), ");\n        break;\n      }\n"];
        }
        const read = readValue(field, "undefined");
        return [
          block,
          ...items,
          "if ((tag & 7) === 2) {\n          const packedEnd = reader.uint32() + reader.pos;\n          while (reader.pos < packedEnd) items.push(",
          ...read,
          ");\n        } else items.push(",
          ...read,
          ");\n        break;\n      }\n",
        ];
      }
      case "map": {
        const key = field.mapKey;
        const keyRead = scalarCode(key, field.utf8Validation, false);
        const keyLocal =
          key === ScalarType.STRING ? "key" : key === ScalarType.BOOL || LONGS.has(key) ? "String(key)" : "key";
        const value = valueType(field);
        const valueZero =
          field.mapKind === "message"
            ? [newOf(field.message), "()"]
            : field.mapKind === "enum"
              ? ["0"]
              : [zeroCode(scalarZero(field.scalar, false))];
        const valueRead =
          field.mapKind === "message"
            ? [readerOf(field.message), "(reader, reader.uint32(), depth + 1, undefined)"]
            : field.mapKind === "enum"
              ? ["reader.int32()"]
              : scalarCode(field.scalar, field.utf8Validation, false);
        return [
          block,
          "const entryEnd = reader.uint32() + reader.pos;\n        let key: ",
          scalarType(key, false),
          " | undefined;\n        let value: ",
          value,
          " | undefined;\n        while (reader.pos < entryEnd) {\n          const entryField = ",
          rt("readTag"),
          "(reader) >>> 3;\n          if (entryField === 1) key = ",
          ...keyRead,
          ";\n          else if (entryField === 2) value = ",
          ...valueRead,
          ";\n        }\n        const entries = (",
          prop,
          " === ",
          rt("NO_ENTRIES"),
          ` ? (${prop} = {}) : ${prop}) as { [key: string]: `,
          value,
          " };\n        key ??= ",
          scalarZero(key, false),
          `;\n        entries[${keyLocal}] = value ?? `,
          ...valueZero,
          ";\n        break;\n      }\n",
        ];
      }
      default:
        return [head, `${prop} = `, ...readValue(field, prop), ";\n        break;\n"];
    }
  }

  for (const desc of messages) {
    const plan = plans.get(desc);
    const name = shapeName(desc);
    const view = `${name}View`;
    f.print(f.jsDoc(`The fields of ${desc.typeName} a decoder reads, as protobuf-es reads them.`));
    f.print(f.export("interface", view), " {");
    const propName = (p) =>
      p.kind === "oneof" ? p.oneof.localName : p.kind === "derived" ? p.derive.property : p.field.localName;
    for (const p of plan) {
      f.print("  ", propName(p), optional(p) ? "?: " : ": ", ...fieldType(p), ";");
    }
    f.print("}");
    f.print();
    f.print(f.jsDoc(`A ${desc.typeName} with no field set.`));
    f.print(f.export("function", `new${view}`), `(): ${view} {`);
    f.print(
      "  return {",
      plan.flatMap((p) => [" ", propName(p), ": ", zero(p), ","]),
      " };",
    );
    f.print("}");
    f.print();
    const hasAsMessage = plan.some((p) => p.kind === "protobuf-es");
    f.print(
      f.jsDoc(
        `Reads ${desc.typeName} (\`length\` bytes, nested \`depth\` deep, the top level being 1), merged into \`target\` when set.`,
      ),
    );
    f.print(f.export("function", `read${name}`), "(");
    f.print("  reader: ", wire("BinaryReader"), ",");
    f.print("  length: number,");
    f.print("  depth: number,");
    f.print(`  target: ${view} | undefined,`);
    f.print(`): ${view} {`);
    f.print("  if (depth > 100) throw ", rt("tooDeep"), `("${desc.typeName}");`);
    f.print("  const end = reader.pos + length;");
    f.print(`  const view = target ?? new${view}();`);
    f.print("  while (reader.pos < end) {");
    if (hasAsMessage) f.print("    const tagStart = reader.pos;");
    f.print("    const tag = ", rt("readTag"), "(reader);");
    f.print("    switch (tag >>> 3) {");
    for (const p of plan) {
      const parts = readField(p, desc);
      parts[parts.length - 1] = parts.at(-1).replace(/\n$/, "");
      f.print(...parts);
    }
    f.print("      default:");
    f.print("        ", rt("walkField"), "(reader, ", schemaOf(desc), ", tag >>> 3, tag & 7, depth);");
    f.print("    }");
    f.print("  }");
    f.print("  return view;");
    f.print("}");
    f.print();
    if (roots.has(desc.typeName)) {
      f.print(f.jsDoc(`${desc.typeName} from its bytes: the generated reader (or \`fromBinary\`, see \`readView\`).`));
      f.print(f.export("const", `${name}ViewReader`), ": ", rt("ViewReader", true), `<${view}> = {`);
      f.print("  schema: ", schemaOf(desc), ",");
      f.print("  read: (bytes) => ", `read${name}(new `, wire("BinaryReader"), "(bytes), bytes.length, 1, undefined),");
      f.print("};");
      f.print();
    }
  }
}

export const protocGenXdsViews = createEcmaScriptPlugin({
  name: "protoc-gen-xds-views",
  version: "v1",
  parseOptions(raw) {
    const options = { config: "", runtime: "" };
    for (const { key, value } of raw) {
      if (key === "config" || key === "runtime") options[key] = value;
      else fail(`unknown option ${key}`);
    }
    if (options.config === "" || options.runtime === "") fail("options config= and runtime= are required");
    return options;
  },
  generateTs(schema) {
    const registry = new Map();
    const visit = (desc) => {
      registry.set(desc.typeName, desc);
      for (const nested of desc.nestedMessages ?? []) visit(nested);
    };
    for (const file of schema.allFiles) for (const message of file.messages) visit(message);
    const { plans, roots } = readConfig(schema.options.config, registry);
    for (const file of schema.allFiles) generateFile(schema, file, plans, roots, schema.options.runtime);
  },
});
