// Where a resource lives in etcd: one key per resource, under a prefix (default `/xds`).
//
//   <prefix>/resources/<type>/<name>                        the resource (the unconstrained variant of its name)
//   <prefix>/resources/<type>/<name>/<constraints>          a TP2 variant of the name
//   <prefix>/nodes/<node-id>/<type>/<name>[/<constraints>]  the same, in the set served to that node id instead
//   <prefix>/meta/...                                       written by the writers (apply's marker); never served
//
// <type> is the message's full name (`envoy.config.cluster.v3.Cluster`: the type URL without
// `type.googleapis.com/`), <constraints> the TP2 constraints in @xdskit/constraint-matcher's text syntax
// (`env=prod && version=v2`, written in canonical form). Each segment is UTF-8 with `%` and `/` percent-encoded
// (`%25`, `%2F`), so names with slashes (xdstp://) stay one segment.
import { canonicalize, canonicalText, fromText } from "@xdskit/constraint-matcher";

export const TYPE_URL_PREFIX = "type.googleapis.com/";
export const DEFAULT_PREFIX = "/xds";

/** A resource's place: its type, name, TP2 variant and node scope. */
export interface ResourceKey {
  /** `type.googleapis.com/<message full name>`. */
  readonly typeUrl: string;
  readonly name: string;
  /** The variant's constraints in canonical text; undefined for the unconstrained variant. */
  readonly constraints?: string;
  /** The node id whose set the resource is in; undefined for the default set. */
  readonly nodeId?: string;
}

export type ParsedKey =
  | { readonly kind: "resource"; readonly key: ResourceKey }
  /** A key the writers keep beside the resources (`<prefix>/meta/...`). */
  | { readonly kind: "meta" }
  | { readonly kind: "malformed"; readonly error: string };

/** `/xds`, `/xds/` and `xds` name the same prefix; the root is the empty prefix. */
export function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

function encodeSegment(text: string): string {
  return text.replace(/%/g, "%25").replace(/\//g, "%2F");
}

function decodeSegment(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The canonical text of constraints; a TypeError saying why they do not parse. `true` gives undefined. */
export function canonicalConstraints(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let canonical: string;
  try {
    canonical = canonicalText(canonicalize(fromText(text)));
  } catch (error) {
    throw new TypeError(`bad constraints "${text}": ${(error as Error).message}`);
  }
  return canonical === "true" ? undefined : canonical;
}

/** The etcd key of a resource (its constraints written in canonical form). */
export function resourceKey(prefix: string, key: ResourceKey): string {
  if (!key.typeUrl.startsWith(TYPE_URL_PREFIX)) {
    throw new TypeError(`type URL "${key.typeUrl}" does not start with ${TYPE_URL_PREFIX}`);
  }
  const type = key.typeUrl.slice(TYPE_URL_PREFIX.length);
  if (type === "" || type.includes("/")) throw new TypeError(`type URL "${key.typeUrl}" has no message name`);
  if (key.name === "") throw new TypeError(`a resource of type ${type} has an empty name`);
  if (key.nodeId === "") throw new TypeError("a node id must not be empty");
  const constraints = canonicalConstraints(key.constraints);
  const scope = key.nodeId === undefined ? "resources" : `nodes/${encodeSegment(key.nodeId)}`;
  const tail = constraints === undefined ? "" : `/${encodeSegment(constraints)}`;
  return `${normalizePrefix(prefix)}/${scope}/${type}/${encodeSegment(key.name)}${tail}`;
}

/**
 * What a key under `prefix` is. Keys outside the layout are `malformed`, with the reason; the constraints of a
 * variant come back canonical (two keys whose constraints differ only in form name the same variant).
 */
export function parseResourceKey(prefix: string, key: string): ParsedKey {
  const base = `${normalizePrefix(prefix)}/`;
  if (!key.startsWith(base)) return { kind: "malformed", error: `not under ${base}` };
  const parts = key.slice(base.length).split("/");
  if (parts[0] === "meta") return { kind: "meta" };
  let rest: string[];
  let nodeId: string | undefined;
  if (parts[0] === "resources") rest = parts.slice(1);
  else if (parts[0] === "nodes") {
    nodeId = decodeSegment(parts[1] ?? "");
    if (nodeId === undefined || nodeId === "") return { kind: "malformed", error: "no node id after nodes/" };
    rest = parts.slice(2);
  } else return { kind: "malformed", error: 'expected "resources/", "nodes/" or "meta/" after the prefix' };
  if (rest.length < 2 || rest.length > 3) {
    return { kind: "malformed", error: "expected <type>/<name> or <type>/<name>/<constraints>" };
  }
  const [type, rawName, rawConstraints] = rest as [string, string, string | undefined];
  if (type === "" || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(type)) {
    return { kind: "malformed", error: `"${type}" is not a message type name` };
  }
  const name = decodeSegment(rawName);
  if (name === undefined || name === "") return { kind: "malformed", error: "empty or badly encoded name" };
  let constraints: string | undefined;
  if (rawConstraints !== undefined) {
    const text = decodeSegment(rawConstraints);
    if (text === undefined) return { kind: "malformed", error: "badly encoded constraints" };
    try {
      constraints = canonicalConstraints(text);
    } catch (error) {
      return { kind: "malformed", error: (error as Error).message };
    }
    if (constraints === undefined) {
      return { kind: "malformed", error: "constraints `true` name the unconstrained variant: drop the segment" };
    }
  }
  return {
    kind: "resource",
    key: {
      typeUrl: `${TYPE_URL_PREFIX}${type}`,
      name,
      ...(constraints !== undefined ? { constraints } : {}),
      ...(nodeId !== undefined ? { nodeId } : {}),
    },
  };
}

/** The identity of a resource key (scope, type, name, variant): equal for keys that name the same variant. */
export function keyIdentity(key: ResourceKey): string {
  return JSON.stringify([key.nodeId ?? null, key.typeUrl, key.name, key.constraints ?? ""]);
}

/** The byte range of every key under a prefix: [`<prefix>/`, `<prefix>0`). */
export function prefixRange(prefix: string): { readonly key: Uint8Array; readonly rangeEnd: Uint8Array } {
  const start = Buffer.from(`${normalizePrefix(prefix)}/`);
  const end = Buffer.from(start);
  end[end.length - 1]! += 1;
  return { key: start, rangeEnd: end };
}

/** The key of apply's marker, which every change written by `applyEtcdChange` updates. */
export function markerKey(prefix: string): string {
  return `${normalizePrefix(prefix)}/meta/apply`;
}
