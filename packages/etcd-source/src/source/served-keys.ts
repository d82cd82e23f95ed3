// What a replica serves from etcd, key by key, and how a batch of key changes (a watch response, or a full load
// compared with what is served) becomes calls on the management server: per resource set (the default one and one
// per node id), one `setResources` for what was put, then `removeResource` for what was deleted, all in one
// synchronous run, so the server pushes the whole batch as one change (no client sees half of an etcd transaction).
import type { Registry } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import type { ManagementServer, NodeScope, ResourceInput, ResourceSet } from "@xdskit/control-plane";
import { keyIdentity, parseResourceKey, type ResourceKey } from "../keys/resource-key.js";
import { decodeValue } from "../keys/resource-value.js";
import type { Logger } from "../logger.js";

/** What a management server must offer a source (a `ManagementServer` does). */
export type EtcdSourceTarget = ResourceSet & Pick<ManagementServer, "forNode">;

/** One key's new state: its value and the revision that wrote it, or no value when it was deleted. */
export interface KeyChange {
  readonly key: string;
  readonly value: Uint8Array | undefined;
  readonly modRevision: number;
}

/** A key that is not served as it stands in etcd, and why. */
export interface SkippedKey {
  readonly key: string;
  readonly reason: string;
}

export interface ApplyOutcome {
  /** Resources set (added or changed in the server, unchanged bytes included). */
  readonly set: number;
  readonly removed: number;
  /** What was set and removed, by resource: `added` were not served before, `changed` were. */
  readonly resources: {
    readonly added: readonly ResourceKey[];
    readonly changed: readonly ResourceKey[];
    readonly removed: readonly ResourceKey[];
  };
  /** Keys whose new value could not be served (a warning was logged for each). */
  readonly skipped: readonly SkippedKey[];
}

interface KeyRecord {
  readonly modRevision: number;
  readonly parsed: ResourceKey | undefined;
  /** Some value of this key is served (the latest, or the last good one when the latest does not decode). */
  readonly served: boolean;
}

interface PendingPut {
  readonly key: string;
  readonly parsed: ResourceKey;
  readonly modRevision: number;
  readonly input: ResourceInput;
  /** A value of this key was served before. */
  readonly replaces: boolean;
}

interface ScopeChanges {
  readonly puts: PendingPut[];
  readonly removes: { key: string; parsed: ResourceKey }[];
}

export interface ServedKeysOptions {
  readonly target: EtcdSourceTarget;
  readonly prefix: string;
  readonly registry: Registry;
  readonly logger: Logger;
}

export interface ServedKeys {
  /** Applies changes (the last one per key wins); changes whose key already holds that revision are skipped. */
  apply(changes: readonly KeyChange[]): ApplyOutcome;
  /** Applies a full read of the prefix: every key it lacks is deleted. */
  resync(all: readonly KeyChange[]): ApplyOutcome;
  /** Keys under the prefix, served or not. */
  readonly keys: number;
  /** Keys whose value is served. */
  readonly served: number;
  /** Keys currently not served, and why. */
  skipped(): SkippedKey[];
}

function changesOf(scopes: Map<string | undefined, ScopeChanges>, nodeId: string | undefined): ScopeChanges {
  let found = scopes.get(nodeId);
  if (!found) {
    found = { puts: [], removes: [] };
    scopes.set(nodeId, found);
  }
  return found;
}

export function createServedKeys(options: ServedKeysOptions): ServedKeys {
  const { target, prefix, registry, logger } = options;
  const records = new Map<string, KeyRecord>();
  /** Variant identity → the etcd key serving it (two keys may spell one variant's constraints differently). */
  const owners = new Map<string, string>();
  const problems = new Map<string, string>();
  const scopes = new Map<string, NodeScope>();
  const servedPerNode = new Map<string, number>();
  let served = 0;

  function scopeOf(nodeId: string | undefined): ResourceSet {
    if (nodeId === undefined) return target;
    let scope = scopes.get(nodeId);
    if (!scope) {
      scope = target.forNode(nodeId);
      scopes.set(nodeId, scope);
    }
    return scope;
  }

  function countServed(parsed: ResourceKey, delta: 1 | -1): void {
    served += delta;
    if (parsed.nodeId === undefined) return;
    servedPerNode.set(parsed.nodeId, (servedPerNode.get(parsed.nodeId) ?? 0) + delta);
  }

  /** A node whose last resource went: its scope is disposed, so its streams go back to the default set. */
  function disposeEmptyScopes(): void {
    for (const [nodeId, count] of servedPerNode) {
      if (count > 0) continue;
      servedPerNode.delete(nodeId);
      scopes.get(nodeId)?.dispose();
      scopes.delete(nodeId);
    }
  }

  function skip(key: string, reason: string, skipped: SkippedKey[]): void {
    if (problems.get(key) !== reason) logger.warn(`skipping etcd key ${key}: ${reason}`);
    problems.set(key, reason);
    skipped.push({ key, reason });
  }

  /** Records a value of `key` that cannot be served (the previous one, if any, stays served), and says why. */
  function keep(
    change: KeyChange,
    parsed: ResourceKey,
    record: KeyRecord | undefined,
    reason: string,
    skipped: SkippedKey[],
  ) {
    const served = record?.served ?? false;
    records.set(change.key, { modRevision: change.modRevision, parsed, served });
    skip(change.key, served ? `${reason}; its previous value is still served` : reason, skipped);
  }

  /** A deleted key: what to remove from the server, if anything of it was served. */
  function stageDeletion(change: KeyChange, scopes: Map<string | undefined, ScopeChanges>): void {
    const record = records.get(change.key);
    records.delete(change.key);
    problems.delete(change.key);
    if (!record?.parsed) return;
    const identity = keyIdentity(record.parsed);
    if (owners.get(identity) === change.key) owners.delete(identity);
    if (record.served) changesOf(scopes, record.parsed.nodeId).removes.push({ key: change.key, parsed: record.parsed });
  }

  /** A put: decoded and staged for its scope, or recorded as not servable. */
  function stagePut(
    change: KeyChange & { value: Uint8Array },
    scopes: Map<string | undefined, ScopeChanges>,
    skipped: SkippedKey[],
  ): void {
    const record = records.get(change.key);
    if (record !== undefined && record.modRevision === change.modRevision) return;
    let parsed = record?.parsed;
    if (parsed === undefined) {
      const parsedKey = parseResourceKey(prefix, change.key);
      if (parsedKey.kind !== "resource") {
        records.set(change.key, { modRevision: change.modRevision, parsed: undefined, served: false });
        if (parsedKey.kind === "malformed") skip(change.key, `not a resource key (${parsedKey.error})`, skipped);
        return;
      }
      parsed = parsedKey.key;
    }
    const identity = keyIdentity(parsed);
    const owner = owners.get(identity);
    if (owner !== undefined && owner !== change.key) {
      keep(change, parsed, record, `the same resource as key ${owner}`, skipped);
      return;
    }
    const decoded = decodeValue(registry, parsed, change.value);
    if (!decoded.ok) {
      keep(change, parsed, record, decoded.error, skipped);
      return;
    }
    owners.set(identity, change.key);
    changesOf(scopes, parsed.nodeId).puts.push({
      key: change.key,
      parsed,
      modRevision: change.modRevision,
      // Served as the bytes it was read as (packed already: the server does not encode it again); decoding above is
      // the check that it is a message of its type.
      input: {
        resource: { $typeName: "google.protobuf.Any", typeUrl: parsed.typeUrl, value: decoded.bytes } as Any,
        name: parsed.name,
        ...(parsed.constraints !== undefined ? { constraints: parsed.constraints } : {}),
      },
      replaces: record?.served ?? false,
    });
    // Recorded before the server takes it; a refusal (putAll) puts the previous state back.
    records.set(change.key, { modRevision: change.modRevision, parsed, served: true });
    if (!record?.served) countServed(parsed, 1);
    problems.delete(change.key);
  }

  function apply(changes: readonly KeyChange[]): ApplyOutcome {
    const last = new Map<string, KeyChange>();
    for (const change of changes) {
      last.delete(change.key);
      last.set(change.key, change);
    }
    const scopes = new Map<string | undefined, ScopeChanges>();
    const skipped: SkippedKey[] = [];
    for (const change of last.values()) {
      if (change.value === undefined) stageDeletion(change, scopes);
      else stagePut(change as KeyChange & { value: Uint8Array }, scopes, skipped);
    }
    const resources = { added: [] as ResourceKey[], changed: [] as ResourceKey[], removed: [] as ResourceKey[] };
    for (const [nodeId, scoped] of scopes) {
      for (const put of putAll(nodeId, scoped.puts, skipped)) {
        (put.replaces ? resources.changed : resources.added).push(put.parsed);
      }
      for (const { key, parsed } of scoped.removes) {
        scopeOf(nodeId).removeResource(parsed.typeUrl, parsed.name, parsed.constraints ?? "true");
        resources.removed.push(parsed);
        countServed(parsed, -1);
        problems.delete(key);
      }
    }
    disposeEmptyScopes();
    return {
      set: resources.added.length + resources.changed.length,
      removed: resources.removed.length,
      resources,
      skipped,
    };
  }

  /**
   * Sets a scope's puts at once; if the server refuses the batch, one by one, skipping (and naming) the refused.
   * Returns the puts the server took.
   */
  function putAll(nodeId: string | undefined, puts: readonly PendingPut[], skipped: SkippedKey[]): PendingPut[] {
    if (puts.length === 0) return [];
    const scope = scopeOf(nodeId);
    try {
      scope.setResources(puts.map((p) => p.input));
      return [...puts];
    } catch {
      const taken: PendingPut[] = [];
      for (const put of puts) {
        try {
          scope.setResource(put.input.resource, put.input);
          taken.push(put);
        } catch (error) {
          // Not served: the server keeps what it had for this variant, if anything (a previous value).
          const hadValue = scopeHas(scope, put.parsed);
          records.set(put.key, { modRevision: put.modRevision, parsed: put.parsed, served: hadValue });
          if (!hadValue) {
            owners.delete(keyIdentity(put.parsed));
            countServed(put.parsed, -1);
          }
          skip(put.key, `refused by the server: ${(error as Error).message}`, skipped);
        }
      }
      return taken;
    }
  }

  return {
    apply,
    resync(all) {
      const present = new Set(all.map((c) => c.key));
      const deletions: KeyChange[] = [];
      for (const [key, record] of records) {
        if (!present.has(key)) deletions.push({ key, value: undefined, modRevision: record.modRevision });
      }
      return apply([...deletions, ...all]);
    },
    get keys() {
      return records.size;
    },
    get served() {
      return served;
    },
    skipped: () => [...problems].map(([key, reason]) => ({ key, reason })),
  };
}

function scopeHas(scope: ResourceSet, key: ResourceKey): boolean {
  return scope.resourceVariants(key.typeUrl, key.name).includes(key.constraints ?? "true");
}
