// The CDS graph under a route's cluster (A37, A75; see docs/decisions.md#connect-xds-aggregate-and-dns-clusters):
// walked depth-first from the root, each aggregate cluster's children in their priority order. A cluster reached a
// second time is skipped (its first position wins); one reached again below itself is a loop and refused, as is a
// cluster more than 16 levels below the root. The leaves (EDS and LOGICAL_DNS clusters) in walk order are the
// priorities of the aggregate's one priority policy.
import type { ClusterUpdate } from "@xdskit/xds-client";

/** A37: the aggregate tree's depth limit; the root is at depth 0, a cluster at depth 16 is refused. */
export const MAX_AGGREGATE_DEPTH = 16;

/** What the CDS watch of a cluster has: its resource, an error, or nothing yet (`undefined`). */
export type ClusterLookup = (name: string) => ClusterUpdate | { readonly error: string } | undefined;

export type ClusterGraph =
  /** Some cluster of the graph has not arrived yet. */
  | { readonly kind: "pending"; readonly clusters: ReadonlySet<string> }
  | { readonly kind: "error"; readonly message: string; readonly clusters: ReadonlySet<string> }
  /** The leaf clusters, highest priority first, each once. */
  | { readonly kind: "leaves"; readonly leaves: readonly string[]; readonly clusters: ReadonlySet<string> };

/**
 * Walks the graph under `root`. `clusters` holds every cluster the walk reached (the CDS watches to keep): on an
 * error or a cluster not arrived yet, the walk still goes on through the other branches, so every watch the
 * graph needs starts at once. The first error in walk order wins over anything pending.
 */
export function resolveClusterGraph(root: string, lookup: ClusterLookup): ClusterGraph {
  const clusters = new Set<string>();
  const leaves: string[] = [];
  let error: string | undefined;
  let pending = false;
  // An explicit stack of clusters to visit; `path` holds the aggregates above the one being visited.
  const path: string[] = [];
  const stack: { name: string; depth: number }[] = [{ name: root, depth: 0 }];
  const onPath = new Set<string>();
  // Entries whose children were pushed: popping them again takes them off the path.
  const leaving = new Set<{ name: string; depth: number }>();
  while (stack.length > 0) {
    const entry = stack[stack.length - 1]!;
    if (leaving.has(entry)) {
      stack.pop();
      onPath.delete(path.pop()!);
      continue;
    }
    stack.pop();
    const { name, depth } = entry;
    if (onPath.has(name)) {
      error ??= `aggregate cluster graph of "${root}" has a loop: "${name}" is below itself`;
      continue;
    }
    if (clusters.has(name)) continue;
    if (depth >= MAX_AGGREGATE_DEPTH) {
      error ??= `aggregate cluster graph of "${root}" is deeper than ${MAX_AGGREGATE_DEPTH} levels at "${name}"`;
      continue;
    }
    clusters.add(name);
    const found = lookup(name);
    if (found === undefined) {
      pending = true;
      continue;
    }
    if ("error" in found) {
      error ??= found.error;
      continue;
    }
    if (found.type !== "aggregate") {
      leaves.push(name);
      continue;
    }
    const leave = { name, depth };
    leaving.add(leave);
    stack.push(leave);
    path.push(name);
    onPath.add(name);
    const children = found.prioritizedClusterNames;
    for (let i = children.length - 1; i >= 0; i--) stack.push({ name: children[i]!, depth: depth + 1 });
  }
  if (error !== undefined) return { kind: "error", message: error, clusters };
  if (pending) return { kind: "pending", clusters };
  if (leaves.length === 0) {
    return { kind: "error", message: `aggregate cluster graph of "${root}" has no leaf clusters`, clusters };
  }
  return { kind: "leaves", leaves, clusters };
}
