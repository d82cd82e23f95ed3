// What an etcd change does, per type, in the words `xdskit serve` uses for a reload: added, changed, removed.
import type { ResourceKey } from "@xdskit/etcd-source";
import { shortTypeName, type TypeChanges } from "./resource-diff.js";

/** `name`, with its variant's constraints and its node id when it has them. */
export function resourceLabel(key: ResourceKey): string {
  const variant = key.constraints !== undefined ? ` [${key.constraints}]` : "";
  const node = key.nodeId !== undefined ? ` (node ${key.nodeId})` : "";
  return `${key.name}${variant}${node}`;
}

/** Groups resources by type, sorted as `describeChanges` expects. */
export function typeChanges(changes: {
  readonly added: readonly ResourceKey[];
  readonly changed: readonly ResourceKey[];
  readonly removed: readonly ResourceKey[];
}): TypeChanges[] {
  const byType = new Map<string, { added: string[]; changed: string[]; removed: string[] }>();
  for (const kind of ["added", "changed", "removed"] as const) {
    for (const key of changes[kind]) {
      const type = shortTypeName(key.typeUrl.slice(key.typeUrl.lastIndexOf("/") + 1));
      const entry = byType.get(type) ?? { added: [], changed: [], removed: [] };
      byType.set(type, entry);
      entry[kind].push(resourceLabel(key));
    }
  }
  return [...byType]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, c]) => ({ type, added: c.added.sort(), changed: c.changed.sort(), removed: c.removed.sort() }));
}

/** `Cluster 2, Listener 1` for resource keys. */
export function countKeysByType(keys: readonly ResourceKey[]): string {
  const counts = new Map<string, number>();
  for (const key of keys) {
    const type = shortTypeName(key.typeUrl.slice(key.typeUrl.lastIndexOf("/") + 1));
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts.size === 0
    ? "none"
    : [...counts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([type, n]) => `${type} ${n}`)
        .join(", ");
}
