// The case of a view's reader that reads one kept field (or oneof) from the wire, as protobuf-es's `fromBinary`
// reads it: a oneof's members, a derived value, a field kept as protobuf-es's own value, a list (packed or not), a
// map entry, or a single value. Each returns the code's parts for `f.print`, ending in a newline.
import { ScalarType } from "@bufbuild/protobuf";
import { LONGS, scalarType, scalarZero } from "./proto-types.mjs";

/** The `case`s of a oneof: a kept member read, one not kept walked over (only which member is set is kept). */
function readOneof(code, plan, desc) {
  const out = [];
  for (const m of plan.oneof.fields) {
    const prop = `view.${plan.oneof.localName}`;
    if (!plan.kept.has(m)) {
      out.push(
        `      case ${m.number}:\n        `,
        code.rt("walkField"),
        "(reader, ",
        code.schemaOf(desc),
        `, ${m.number}, tag & 7, depth);\n        ${prop} = { case: "${m.localName}", value: undefined };\n        break;\n`,
      );
      continue;
    }
    const previous =
      m.message === undefined ? "undefined" : `${prop}.case === "${m.localName}" ? ${prop}.value : undefined`;
    out.push(
      `      case ${m.number}:\n        ${prop} = { case: "${m.localName}", value: `,
      ...code.readValue(m, previous),
      " };\n        break;\n",
    );
  }
  return out;
}

/**
 * A repeated field: its items appended, a packed run of scalars read whole. A list's first item makes an array of
 * exactly one element (most lists a decoder reads hold one), where `push` onto an empty array would make room for 17.
 */
function readList(code, field, prop, block) {
  const item = code.valueType(field);
  const scalar = field.listKind === "message" ? undefined : (field.scalar ?? ScalarType.INT32);
  if (scalar === undefined || scalar === ScalarType.STRING || scalar === ScalarType.BYTES) {
    return [
      block,
      "const item = ",
      ...code.readValue(field, "undefined"),
      `;\n        if (${prop} === `,
      code.rt("NO_ITEMS"),
      `) ${prop} = [item];\n        else (${prop} as `,
      item,
      "[]).push(item);\n        break;\n      }\n",
    ];
  }
  const items = [
    `const items = (${prop} === `,
    code.rt("NO_ITEMS"),
    ` ? (${prop} = []) : ${prop}) as `,
    item,
    "[];\n        ",
  ];
  const read = code.readValue(field, "undefined");
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

/** A map entry: its key and value (either may be missing: the zero value), set in the view's object. */
function readMap(code, field, prop, block) {
  const key = field.mapKey;
  const keyRead = code.scalarCode(key, field.utf8Validation, false);
  const keyLocal =
    key === ScalarType.STRING ? "key" : key === ScalarType.BOOL || LONGS.has(key) ? "String(key)" : "key";
  const value = code.valueType(field);
  const valueZero =
    field.mapKind === "message"
      ? [code.newOf(field.message), "()"]
      : field.mapKind === "enum"
        ? ["0"]
        : [code.zeroCode(scalarZero(field.scalar, false))];
  const valueRead =
    field.mapKind === "message"
      ? [code.readerOf(field.message), "(reader, reader.uint32(), depth + 1, undefined)"]
      : field.mapKind === "enum"
        ? ["reader.int32()"]
        : code.scalarCode(field.scalar, field.utf8Validation, false);
  return [
    block,
    "const entryEnd = reader.uint32() + reader.pos;\n        let key: ",
    scalarType(key, false),
    " | undefined;\n        let value: ",
    value,
    " | undefined;\n        while (reader.pos < entryEnd) {\n          const entryField = ",
    code.rt("readTag"),
    "(reader) >>> 3;\n          if (entryField === 1) key = ",
    ...keyRead,
    ";\n          else if (entryField === 2) value = ",
    ...valueRead,
    ";\n        }\n        const entries = (",
    prop,
    " === ",
    code.rt("NO_ENTRIES"),
    ` ? (${prop} = {}) : ${prop}) as { [key: string]: `,
    value,
    " };\n        key ??= ",
    scalarZero(key, false),
    `;\n        entries[${keyLocal}] = value ?? `,
    ...valueZero,
    ";\n        break;\n      }\n",
  ];
}

/** The reader's `case` (or `case`s, for a oneof) for one planned field of `desc`. */
export function readField(code, plan, desc) {
  if (plan.kind === "oneof") return readOneof(code, plan, desc);
  const field = plan.field;
  const prop = `view.${field.localName}`;
  const head = `      case ${field.number}:\n        `;
  const block = `      case ${field.number}: {\n        `;
  if (plan.kind === "derived") {
    const derivedProp = `view.${plan.derive.property}`;
    return [
      head,
      `${derivedProp} = `,
      code.f.import(plan.derive.read, plan.derive.from),
      "(reader, ",
      code.schemaOf(desc),
      `, ${field.number}, tag & 7, depth, ${derivedProp});\n        break;\n`,
    ];
  }
  if (plan.kind === "protobuf-es") {
    return [
      head,
      `${prop} = `,
      code.rt("readAsMessage"),
      "(reader, ",
      code.schemaOf(desc),
      `, ${field.number}, tag & 7, depth, tagStart, "${field.localName}", ${prop});\n        break;\n`,
    ];
  }
  switch (field.fieldKind) {
    case "list":
      return readList(code, field, prop, block);
    case "map":
      return readMap(code, field, prop, block);
    default:
      return [head, `${prop} = `, ...code.readValue(field, prop), ";\n        break;\n"];
  }
}
