// The resources under a prefix, decoded, as a replica would serve them: for tools (`xdskit get`) and tests.
import type { Message, Registry } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos";
import type { EtcdConnection } from "../etcd/etcd-connection.js";
import { DEFAULT_PREFIX, normalizePrefix, parseResourceKey, type ResourceKey } from "../keys/resource-key.js";
import { decodeValue } from "../keys/resource-value.js";
import { readPrefix } from "./read-prefix.js";

export interface StoredResource {
  readonly key: string;
  readonly resource: ResourceKey;
  readonly modRevision: number;
  /** The decoded message; undefined when the value does not decode (`error` says why). */
  readonly message?: Message;
  readonly error?: string;
}

export interface ReadResourcesOptions {
  readonly etcd: EtcdConnection;
  /** Default `/xds`. */
  readonly prefix?: string;
  /** Only this type (a type URL). */
  readonly typeUrl?: string;
  /** Only this name. */
  readonly name?: string;
  /** Only the set of this node id; `null` for the default set only; undefined for every set. */
  readonly nodeId?: string | null;
  readonly registry?: Registry;
}

export interface StoredResources {
  readonly revision: number;
  readonly resources: readonly StoredResource[];
  /** Keys under the prefix outside the layout, with why. */
  readonly malformed: readonly { readonly key: string; readonly error: string }[];
}

/** Reads (at one revision) and decodes the resources under a prefix, sorted by key. */
export async function readEtcdResources(options: ReadResourcesOptions): Promise<StoredResources> {
  const prefix = normalizePrefix(options.prefix ?? DEFAULT_PREFIX);
  const registry = options.registry ?? xdsRegistry;
  const snapshot = await readPrefix(options.etcd, prefix);
  const resources: StoredResource[] = [];
  const malformed: { key: string; error: string }[] = [];
  for (const kv of snapshot.kvs) {
    const parsed = parseResourceKey(prefix, kv.key);
    if (parsed.kind === "meta") continue;
    if (parsed.kind === "malformed") {
      malformed.push({ key: kv.key, error: parsed.error });
      continue;
    }
    const key = parsed.key;
    if (options.typeUrl !== undefined && key.typeUrl !== options.typeUrl) continue;
    if (options.name !== undefined && key.name !== options.name) continue;
    if (options.nodeId === null && key.nodeId !== undefined) continue;
    if (typeof options.nodeId === "string" && key.nodeId !== options.nodeId) continue;
    const decoded = decodeValue(registry, key, kv.value ?? new Uint8Array());
    resources.push(
      decoded.ok
        ? { key: kv.key, resource: key, modRevision: kv.modRevision, message: decoded.message }
        : { key: kv.key, resource: key, modRevision: kv.modRevision, error: decoded.error },
    );
  }
  return { revision: snapshot.revision, resources, malformed };
}
