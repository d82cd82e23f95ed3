// A change to write to etcd, worked out against what the prefix holds at one revision: which keys are added,
// changed (their message differs, not merely their encoding) and removed. The plan remembers that revision, so
// writing it can check that nobody wrote the prefix since (apply-change.ts).
import { type DescMessage, equals, type Message, type Registry } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos";
import type { EtcdConnection } from "../etcd/etcd-connection.js";
import {
  DEFAULT_PREFIX,
  normalizePrefix,
  parseResourceKey,
  type ResourceKey,
  resourceKey,
  TYPE_URL_PREFIX,
} from "../keys/resource-key.js";
import { decodeValue, encodeValue, messageName, type ValueFormat } from "../keys/resource-value.js";
import { readPrefix } from "../source/read-prefix.js";

/** A resource to write: a message, and where it goes. */
export interface EtcdResource {
  readonly resource: Message;
  /** The message's schema, when the registry does not know its type. */
  readonly schema?: DescMessage;
  /** Default: the message's own name (`cluster_name` for endpoints). It must equal the message's own name. */
  readonly name?: string;
  /** A TP2 variant: its constraints (constraint-matcher text syntax). */
  readonly constraints?: string;
  /** Written to the set served to that node id instead of the default set. */
  readonly nodeId?: string;
}

export interface PlannedPut {
  readonly key: string;
  readonly resource: ResourceKey;
  readonly value: Uint8Array;
  readonly kind: "added" | "changed";
}

export interface PlannedDelete {
  readonly key: string;
  /** Undefined for a key outside the layout (removed by a replacing plan too). */
  readonly resource: ResourceKey | undefined;
}

export interface EtcdChangePlan {
  readonly prefix: string;
  /** The revision the prefix was read at; writing the plan fails if the prefix changed after it. */
  readonly revision: number;
  readonly puts: readonly PlannedPut[];
  readonly deletes: readonly PlannedDelete[];
  /** Resources already in etcd as given. */
  readonly unchanged: number;
}

export interface PlanOptions {
  readonly etcd: EtcdConnection;
  /** Default `/xds`. */
  readonly prefix?: string;
  readonly resources: Iterable<EtcdResource>;
  /**
   * True (the default): the prefix is to hold exactly `resources`; every other key under it is removed (the
   * writers' own `meta/` keys excepted). False: other keys are kept, except those in `remove`.
   */
  readonly replace?: boolean;
  /** With `replace: false`, resources to remove. */
  readonly remove?: Iterable<ResourceKey>;
  /** Default `binary`. */
  readonly valueFormat?: ValueFormat;
  /**
   * Plan against this revision rather than the newest (e.g. the one a reviewed dry run showed): writing the plan
   * then fails if anything under the prefix changed after it. etcd must still hold it (not compacted).
   */
  readonly revision?: number;
  readonly registry?: Registry;
}

/**
 * Reads the prefix at one revision and works out the change; a TypeError names a resource that cannot be written
 * (no name, a name that differs from the message's, bad constraints, an unknown type, the same resource twice).
 */
export async function planEtcdChange(options: PlanOptions): Promise<EtcdChangePlan> {
  const prefix = normalizePrefix(options.prefix ?? DEFAULT_PREFIX);
  const registry = options.registry ?? xdsRegistry;
  const format = options.valueFormat ?? "binary";
  const wanted = new Map<string, { key: ResourceKey; schema: DescMessage; message: Message; value: Uint8Array }>();
  for (const item of options.resources) {
    const schema = item.schema ?? registry.getMessage(item.resource.$typeName);
    if (!schema) throw new TypeError(`unknown message type ${item.resource.$typeName}: pass its schema`);
    const own = messageName(item.resource);
    const name = item.name ?? own;
    if (name === undefined || name === "") {
      throw new TypeError(`a resource of type ${item.resource.$typeName} has no name`);
    }
    if (own !== undefined && own !== name) {
      throw new TypeError(`${item.resource.$typeName} "${own}" given the name "${name}": they must be equal`);
    }
    const key: ResourceKey = {
      typeUrl: `${TYPE_URL_PREFIX}${schema.typeName}`,
      name,
      ...(item.constraints !== undefined ? { constraints: item.constraints } : {}),
      ...(item.nodeId !== undefined ? { nodeId: item.nodeId } : {}),
    };
    const etcdKey = resourceKey(prefix, key);
    const parsed = parseResourceKey(prefix, etcdKey);
    if (parsed.kind !== "resource") throw new TypeError(`resource ${name} makes a bad key ${etcdKey}`);
    if (wanted.has(etcdKey)) throw new TypeError(`${schema.typeName} "${name}" is given twice (${etcdKey})`);
    wanted.set(etcdKey, {
      key: parsed.key,
      schema,
      message: item.resource,
      value: encodeValue(registry, schema, item.resource, format),
    });
  }
  const removing = new Set([...(options.remove ?? [])].map((key) => resourceKey(prefix, key)));
  const replace = options.replace ?? true;
  const current = await readPrefix(options.etcd, prefix, undefined, options.revision);
  const puts: PlannedPut[] = [];
  const deletes: PlannedDelete[] = [];
  let unchanged = 0;
  const seen = new Set<string>();
  for (const kv of current.kvs) {
    seen.add(kv.key);
    const parsed = parseResourceKey(prefix, kv.key);
    if (parsed.kind === "meta") continue;
    const want = wanted.get(kv.key);
    if (want === undefined) {
      if (replace || removing.has(kv.key)) {
        deletes.push({ key: kv.key, resource: parsed.kind === "resource" ? parsed.key : undefined });
      }
      continue;
    }
    if (kv.value !== undefined && sameValue(registry, want, kv.value)) unchanged++;
    else puts.push({ key: kv.key, resource: want.key, value: want.value, kind: "changed" });
  }
  for (const [key, want] of wanted) {
    if (!seen.has(key)) puts.push({ key, resource: want.key, value: want.value, kind: "added" });
  }
  return { prefix, revision: current.revision, puts, deletes, unchanged };
}

function sameValue(
  registry: Registry,
  want: { key: ResourceKey; schema: DescMessage; message: Message; value: Uint8Array },
  stored: Uint8Array,
): boolean {
  if (Buffer.from(stored).equals(want.value)) return true;
  const decoded = decodeValue(registry, want.key, stored);
  return decoded.ok && equals(want.schema, decoded.message, want.message);
}

/** The keys a plan touches, with the variant identity of each, for callers that report it. */
export function describePlanKey(key: ResourceKey): string {
  const variant = key.constraints !== undefined ? ` [${key.constraints}]` : "";
  const node = key.nodeId !== undefined ? ` (node ${key.nodeId})` : "";
  return `${key.name}${variant}${node}`;
}
