// What a generated wire view of a message must equal: the protobuf-es message cut down to the fields views.json
// keeps (a oneof kept by name only keeps which member is set), and the ViewReader of each root message, found by
// its name in the generated files.
import { readFileSync } from "node:fs";
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos/registry";
import { hashKeyFromMetadata } from "../../src/resources/endpoint-hash-key.js";
import type { ViewReader } from "../../src/resources/view-runtime.js";

interface ViewsConfig {
  readonly roots: readonly string[];
  readonly protobufEs: readonly string[];
  readonly derived?: Readonly<Record<string, { readonly property: string }>>;
  readonly messages: Readonly<Record<string, readonly string[]>>;
}

export const viewsConfig: ViewsConfig = JSON.parse(
  readFileSync(new URL("../../views.json", import.meta.url), "utf8"),
) as ViewsConfig;

const asMessage = new Set(viewsConfig.protobufEs);

/** What each derived field's view property must hold, computed from protobuf-es's value of the field. */
const DERIVED: Readonly<Record<string, (value: never) => unknown>> = {
  "envoy.config.endpoint.v3.LbEndpoint.metadata": hashKeyFromMetadata,
};
for (const name of Object.keys(viewsConfig.derived ?? {})) {
  if (DERIVED[name] === undefined) throw new Error(`views.json derives ${name}: view-projection.ts has no reference`);
}

/** The protoc-gen-es name of a message (nested names joined by `_`). */
function shapeName(desc: DescMessage): string {
  const pkg = desc.file.proto.package;
  return desc.typeName.slice(pkg === "" ? 0 : pkg.length + 1).replaceAll(".", "_");
}

/** The generated ViewReader of a root message. */
export async function viewReaderOf(typeName: string): Promise<{ desc: DescMessage; reader: ViewReader<unknown> }> {
  const desc = xdsRegistry.getMessage(typeName);
  if (desc === undefined) throw new Error(`no message ${typeName}`);
  const path = new URL(`../../src/gen/${desc.file.name}_view.ts`, import.meta.url).href;
  const module = (await import(/* @vite-ignore */ path)) as Record<string, ViewReader<unknown>>;
  const reader = module[`${shapeName(desc)}ViewReader`];
  if (reader === undefined) throw new Error(`no ViewReader for ${typeName}`);
  return { desc, reader };
}

function projectValue(field: DescField, value: unknown, unboxed: boolean): unknown {
  const message = field.message;
  if (message === undefined || value === undefined) return value;
  if (unboxed && message.typeName.startsWith("google.protobuf.") && message.typeName.endsWith("Value")) return value;
  return project(message, value as Record<string, unknown>);
}

/** `message` (a protobuf-es message of `desc`) with only the fields its view keeps. */
export function project(desc: DescMessage, message: Record<string, unknown>): Record<string, unknown> {
  const kept = new Set(viewsConfig.messages[desc.typeName] ?? []);
  const out: Record<string, unknown> = {};
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      const keptMembers = member.fields.filter((f) => kept.has(f.name));
      if (!kept.has(member.name) && keptMembers.length === 0) continue;
      const value = message[member.localName] as { case: string | undefined; value?: unknown };
      const field = member.fields.find((f) => f.localName === value.case);
      out[member.localName] =
        field === undefined
          ? { case: undefined }
          : {
              case: value.case,
              value: keptMembers.includes(field) ? projectValue(field, value.value, false) : undefined,
            };
      continue;
    }
    if (!kept.has(member.name)) continue;
    const value = message[member.localName];
    const derived = viewsConfig.derived?.[`${desc.typeName}.${member.name}`];
    if (derived !== undefined) {
      out[derived.property] = DERIVED[`${desc.typeName}.${member.name}`]?.(value as never);
      continue;
    }
    if (asMessage.has(`${desc.typeName}.${member.name}`)) out[member.localName] = value;
    else if (member.fieldKind === "list") {
      out[member.localName] = (value as unknown[]).map((item) => projectValue(member, item, false));
    } else if (member.fieldKind === "map") {
      const entries: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        entries[key] = projectValue(member, item, false);
      }
      out[member.localName] = entries;
    } else out[member.localName] = projectValue(member, value, member.fieldKind === "message");
  }
  return out;
}
