// What a reload of `xdskit serve` changed: per type, the resources added, changed (not equal as messages) and removed.
import { equals } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos";
import type { LoadedResource } from "./resource-files.js";

export interface TypeChanges {
  /** The message name without its package, e.g. `Cluster`. */
  readonly type: string;
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

/** The short name people know a type by: `envoy.config.cluster.v3.Cluster` is `Cluster`. */
export function shortTypeName(typeName: string): string {
  return typeName.slice(typeName.lastIndexOf(".") + 1);
}

function same(a: LoadedResource, b: LoadedResource): boolean {
  // Every loaded resource was unpacked through this registry, so its schema is there.
  const schema = xdsRegistry.getMessage(a.message.$typeName);
  return schema !== undefined && equals(schema, a.message, b.message);
}

function byKey(resources: readonly LoadedResource[]): Map<string, LoadedResource> {
  return new Map(resources.map((r) => [`${r.message.$typeName}\u0000${r.name}`, r]));
}

/** The changes from `before` to `after`, one entry per type that changed, sorted by type; names sorted. */
export function diffResources(before: readonly LoadedResource[], after: readonly LoadedResource[]): TypeChanges[] {
  const old = byKey(before);
  const now = byKey(after);
  const changes = new Map<string, { added: string[]; changed: string[]; removed: string[] }>();
  const entry = (resource: LoadedResource) => {
    const type = shortTypeName(resource.message.$typeName);
    const found = changes.get(type) ?? { added: [], changed: [], removed: [] };
    changes.set(type, found);
    return found;
  };
  for (const [key, resource] of now) {
    const previous = old.get(key);
    if (!previous) entry(resource).added.push(resource.name);
    else if (!same(previous, resource)) entry(resource).changed.push(resource.name);
  }
  for (const [key, resource] of old) if (!now.has(key)) entry(resource).removed.push(resource.name);
  return [...changes]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, c]) => ({ type, added: c.added.sort(), changed: c.changed.sort(), removed: c.removed.sort() }));
}

const NAMES_SHOWN = 5;

function names(list: readonly string[]): string {
  const shown = list.slice(0, NAMES_SHOWN).join(", ");
  return list.length > NAMES_SHOWN ? `${shown} and ${list.length - NAMES_SHOWN} more` : shown;
}

/** One line: `Cluster: added a, b; changed echo. ClusterLoadAssignment: removed old` or `nothing changed`. */
export function describeChanges(changes: readonly TypeChanges[]): string {
  if (changes.length === 0) return "nothing changed";
  return changes
    .map((c) => {
      const parts = (["added", "changed", "removed"] as const)
        .filter((kind) => c[kind].length > 0)
        .map((kind) => `${kind} ${names(c[kind])}`);
      return `${c.type}: ${parts.join("; ")}`;
    })
    .join(". ");
}

/** `Cluster 2, Listener 1`: how many resources of each type, for the banner. */
export function countByType(resources: readonly LoadedResource[]): string {
  const counts = new Map<string, number>();
  for (const { message } of resources) {
    const type = shortTypeName(message.$typeName);
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts.size === 0
    ? "none"
    : [...counts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([type, n]) => `${type} ${n}`)
        .join(", ");
}
