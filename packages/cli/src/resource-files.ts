// Resources from JSON and YAML files, in proto JSON with `@type` (the JSON form of google.protobuf.Any), e.g.
//   {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "echo", "type": "EDS", ...}
// A file holds one resource, a list of them, or (YAML) several documents.
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fromJson, type JsonValue, type Message } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { xdsRegistry } from "@xdskit/protos";
import { parseAllDocuments } from "yaml";
import { unknownFieldProblem } from "./json-field-path.js";

export const RESOURCE_FILE = /\.(json|ya?ml)$/i;

/** One resource of the files, with what identifies it: its type and its name (`cluster_name` for endpoints). */
export interface LoadedResource {
  readonly message: Message;
  readonly name: string;
  /** `where` it was read: `file[index]`. */
  readonly where: string;
}

export interface LoadedResources {
  readonly resources: readonly LoadedResource[];
  /** `file[index]: problem`, one per resource that could not be read; empty when all were. */
  readonly problems: readonly string[];
  readonly files: number;
}

/** The documents of one file as plain JSON values. */
function documents(path: string, text: string): unknown[] {
  if (/\.json$/i.test(path)) return [JSON.parse(text)];
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join("; "));
    return doc.toJS();
  });
}

function toMessage(value: unknown): Message {
  if (typeof value !== "object" || value === null || !("@type" in value)) {
    throw new Error('expected an object with "@type" (e.g. "type.googleapis.com/envoy.config.cluster.v3.Cluster")');
  }
  let any: Any;
  try {
    any = fromJson(AnySchema, value as JsonValue, { registry: xdsRegistry });
  } catch (error) {
    // fromJson names an unknown key without saying where it is: find it, with the names it is close to.
    throw new Error(unknownFieldProblem(value, xdsRegistry) ?? (error as Error).message);
  }
  const message = anyUnpack(any, xdsRegistry);
  if (!message) throw new Error(`unknown type ${any.typeUrl}`);
  return message;
}

/** Reads every resource file under `dir` (subfolders included), sorted by path; never throws for a bad file. */
export async function loadResourceFiles(dir: string): Promise<LoadedResources> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile() && RESOURCE_FILE.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const resources: LoadedResource[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const path of paths) {
    const shown = relative(dir, path);
    let values: unknown[];
    try {
      values = documents(path, await readFile(path, "utf8")).flatMap((doc) => (Array.isArray(doc) ? doc : [doc]));
    } catch (error) {
      problems.push(`${shown}: ${(error as Error).message}`);
      continue;
    }
    values.forEach((value, index) => {
      if (value === null || value === undefined) return; // an empty YAML document
      const where = `${shown}[${index}]`;
      try {
        const message = toMessage(value);
        const name = String(
          (message as { clusterName?: unknown }).clusterName ?? (message as { name?: unknown }).name ?? "",
        );
        const key = `${message.$typeName}/${name}`;
        const first = seen.get(key);
        if (first) throw new Error(`${message.$typeName} "${name}" is also defined at ${first}`);
        seen.set(key, where);
        resources.push({ message, name, where });
      } catch (error) {
        problems.push(`${where}: ${(error as Error).message}`);
      }
    });
  }
  return { resources, problems, files: paths.length };
}
