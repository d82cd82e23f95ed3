// The bootstrap's `node`: its id, cluster and locality, and metadata checked to travel as a google.protobuf.Struct
// within bounds.
import type { NodeConfig } from "./bootstrap-types.js";
import type { Json, JsonObject, Reader } from "./json-reader.js";

/**
 * `node.metadata` bounds (docs/limits.md#bootstrap). It travels as a google.protobuf.Struct in the Node of every
 * stream: each JSON level is two message levels there (Struct, then Value), and servers commonly refuse more than
 * 100 message levels, so 32 JSON levels keep it well within; 1 MiB keeps the first request far below the 4 MiB that
 * gRPC servers accept by default.
 */
export const MAX_NODE_METADATA_DEPTH = 32;
export const MAX_NODE_METADATA_BYTES = 1 << 20;

const USER_AGENT_NAME = "xdskit";
const USER_AGENT_VERSION = "0.0.0";

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Checks that `root` can travel as a google.protobuf.Struct within the bounds above: JSON values only (finite
 * numbers, plain objects), nested at most MAX_NODE_METADATA_DEPTH deep, at most MAX_NODE_METADATA_BYTES as JSON.
 * Iterative, so a nesting of any depth fails cleanly; records the first problem only.
 */
function checkStructJson(r: Reader, root: JsonObject, rootPath: string): boolean {
  const pending: { value: Json; path: string; depth: number }[] = [{ value: root, path: rootPath, depth: 1 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, path, depth } = item;
    if (value === null || typeof value === "string" || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (Number.isFinite(value)) continue;
      r.problem(path, `${value} has no JSON form`);
      return false;
    }
    if (typeof value !== "object" || !(Array.isArray(value) || isPlainObject(value))) {
      r.problem(
        path,
        `expected a JSON value, got ${typeof value === "object" ? "an instance of a class" : typeof value}`,
      );
      return false;
    }
    if (depth > MAX_NODE_METADATA_DEPTH) {
      r.problem(rootPath, `nested deeper than ${MAX_NODE_METADATA_DEPTH} levels (at ${path})`);
      return false;
    }
    const children: [string, Json][] = Array.isArray(value)
      ? value.map((element, i) => [`[${i}]`, element])
      : Object.entries(value).map(([key, element]) => [`.${key}`, element]);
    for (const [suffix, element] of children) pending.push({ value: element, path: path + suffix, depth: depth + 1 });
  }
  const bytes = Buffer.byteLength(JSON.stringify(root));
  if (bytes > MAX_NODE_METADATA_BYTES) {
    r.problem(rootPath, `${bytes} bytes as JSON, more than the ${MAX_NODE_METADATA_BYTES} allowed`);
    return false;
  }
  return true;
}

export function parseNode(r: Reader, value: Json): NodeConfig {
  const node: JsonObject = value === undefined ? {} : (r.object(value, "node") ?? {});
  const id = node.id === undefined ? "" : (r.string(node.id, "node.id") ?? "");
  const cluster = node.cluster === undefined ? "" : (r.string(node.cluster, "node.cluster") ?? "");
  let locality: NodeConfig["locality"];
  if (node.locality !== undefined) {
    const l = r.object(node.locality, "node.locality");
    if (l) {
      locality = Object.freeze({
        region: r.optionalString(l, "region", "node.locality") ?? "",
        zone: r.optionalString(l, "zone", "node.locality") ?? "",
        subZone: r.optionalString(l, "sub_zone", "node.locality") ?? "",
      });
    }
  }
  let metadata: Record<string, unknown> | undefined;
  if (node.metadata !== undefined) {
    metadata = r.object(node.metadata, "node.metadata");
    if (metadata !== undefined && !checkStructJson(r, metadata, "node.metadata")) metadata = undefined;
  }
  return Object.freeze({
    id,
    cluster,
    ...(locality === undefined ? {} : { locality }),
    ...(metadata === undefined ? {} : { metadata: Object.freeze(metadata) }),
    userAgentName: USER_AGENT_NAME,
    userAgentVersion: USER_AGENT_VERSION,
  });
}
