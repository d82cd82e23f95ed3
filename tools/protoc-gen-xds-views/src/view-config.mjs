// views.json read into a plan: for each kept message, its fields as the views keep them (read, derived, or kept as
// protobuf-es's own value), each checked to be readable as a view.
import { readFileSync } from "node:fs";
import { fail, JSON_TYPES, WRAPPERS } from "./proto-types.mjs";

/**
 * The plan: for each kept message, its fields as the config lists them. `messages` maps a full message name to field
 * names (a oneof's name keeps only which member is set); `protobufEs` lists full field names kept as protobuf-es's
 * own value; `derived` maps a full field name to a hand-written reader that keeps one value computed from the field
 * (`{ property, type, zero, read, from }`).
 */
export function readConfig(path, registry) {
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
