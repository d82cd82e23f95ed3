// protoc-gen-xds-views: writes wire views, readers that decode only the fields a decoder reads straight from the
// bytes, for the messages a config file names (packages/xds-client/views.json). See README.md for what a view is and
// the rules of protobuf-es's `fromBinary` each reader follows. The config is read into a plan (view-config.mjs); each
// view is printed from the plan with the code pieces of view-code.mjs and the field cases of field-reader.mjs.
import { createEcmaScriptPlugin } from "@bufbuild/protoplugin";
import { readField } from "./field-reader.mjs";
import { fail, shapeName } from "./proto-types.mjs";
import { createViewCode } from "./view-code.mjs";
import { readConfig } from "./view-config.mjs";

/** The property a planned field has in its view. */
const propName = (p) =>
  p.kind === "oneof" ? p.oneof.localName : p.kind === "derived" ? p.derive.property : p.field.localName;

/** The view's interface: one property per planned field. */
function printInterface(code, desc, plan) {
  const { f } = code;
  const view = `${shapeName(desc)}View`;
  f.print(f.jsDoc(`The fields of ${desc.typeName} a decoder reads, as protobuf-es reads them.`));
  f.print(f.export("interface", view), " {");
  for (const p of plan) {
    f.print("  ", propName(p), code.optional(p) ? "?: " : ": ", ...code.fieldType(p), ";");
  }
  f.print("}");
  f.print();
}

/** `new<Name>View()`: the view with no field set. */
function printNewView(code, desc, plan) {
  const { f } = code;
  const view = `${shapeName(desc)}View`;
  f.print(f.jsDoc(`A ${desc.typeName} with no field set.`));
  f.print(f.export("function", `new${view}`), `(): ${view} {`);
  f.print(
    "  return {",
    plan.flatMap((p) => [" ", propName(p), ": ", code.zero(p), ","]),
    " };",
  );
  f.print("}");
  f.print();
}

/** `read<Name>(reader, length, depth, target)`: a case per planned field, any other field walked over. */
function printReader(code, desc, plan) {
  const { f, rt } = code;
  const name = shapeName(desc);
  const view = `${name}View`;
  const hasAsMessage = plan.some((p) => p.kind === "protobuf-es");
  f.print(
    f.jsDoc(
      `Reads ${desc.typeName} (\`length\` bytes, nested \`depth\` deep, the top level being 1), merged into \`target\` when set.`,
    ),
  );
  f.print(f.export("function", `read${name}`), "(");
  f.print("  reader: ", code.wire("BinaryReader"), ",");
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
    const parts = readField(code, p, desc);
    parts[parts.length - 1] = parts.at(-1).replace(/\n$/, "");
    f.print(...parts);
  }
  f.print("      default:");
  f.print("        ", rt("walkField"), "(reader, ", code.schemaOf(desc), ", tag >>> 3, tag & 7, depth);");
  f.print("    }");
  f.print("  }");
  f.print("  return view;");
  f.print("}");
  f.print();
}

/** A root message's `ViewReader`: its schema and the generated reader of its bytes. */
function printViewReader(code, desc) {
  const { f, rt } = code;
  const name = shapeName(desc);
  const view = `${name}View`;
  f.print(f.jsDoc(`${desc.typeName} from its bytes: the generated reader (or \`fromBinary\`, see \`readView\`).`));
  f.print(f.export("const", `${name}ViewReader`), ": ", rt("ViewReader", true), `<${view}> = {`);
  f.print("  schema: ", code.schemaOf(desc), ",");
  f.print(
    "  read: (bytes) => ",
    `read${name}(new `,
    code.wire("BinaryReader"),
    "(bytes), bytes.length, 1, undefined),",
  );
  f.print("};");
  f.print();
}

/** Generates the views of one proto file. */
function generateFile(schema, file, plans, roots, runtimePath) {
  const messages = [...plans.keys()].filter((desc) => desc.file === file);
  if (messages.length === 0) return;
  const f = schema.generateFile(`${file.name}_view.ts`);
  f.preamble(file);
  const code = createViewCode(f, file, runtimePath);
  for (const desc of messages) {
    const plan = plans.get(desc);
    printInterface(code, desc, plan);
    printNewView(code, desc, plan);
    printReader(code, desc, plan);
    if (roots.has(desc.typeName)) printViewReader(code, desc);
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
