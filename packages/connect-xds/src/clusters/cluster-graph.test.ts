// The aggregate cluster graph walk (cluster-graph.ts): fixed cases for each rule, and a property against a plain
// recursive walk of the same rules over random graphs (loops, diamonds, missing and failed clusters, deep chains).
import type { ClusterUpdate } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ClusterGraph, type ClusterLookup, MAX_AGGREGATE_DEPTH, resolveClusterGraph } from "./cluster-graph.js";

type Node = { kind: "leaf" } | { kind: "aggregate"; children: string[] } | { kind: "error" } | { kind: "missing" };

function lookupOf(graph: Record<string, Node>): ClusterLookup {
  return (name) => {
    const node = graph[name] ?? { kind: "missing" };
    if (node.kind === "missing") return undefined;
    if (node.kind === "error") return { error: `${name} failed` };
    if (node.kind === "leaf") return { type: "eds", name } as unknown as ClusterUpdate;
    return { type: "aggregate", name, prioritizedClusterNames: node.children } as unknown as ClusterUpdate;
  };
}

/** The rules written as plainly as possible: recursion, a path array, a visited list. */
function reference(root: string, graph: Record<string, Node>): { kind: string; leaves?: string[]; clusters: string[] } {
  const visited: string[] = [];
  const leaves: string[] = [];
  const errors: string[] = [];
  let pending = false;
  const visit = (name: string, path: string[]): void => {
    if (path.includes(name)) {
      errors.push("loop");
      return;
    }
    if (visited.includes(name)) return;
    if (path.length >= MAX_AGGREGATE_DEPTH) {
      errors.push("depth");
      return;
    }
    visited.push(name);
    const node = graph[name] ?? { kind: "missing" };
    if (node.kind === "missing") pending = true;
    else if (node.kind === "error") errors.push(`${name} failed`);
    else if (node.kind === "leaf") leaves.push(name);
    else for (const child of node.children) visit(child, [...path, name]);
  };
  visit(root, []);
  const clusters = [...visited].sort();
  if (errors.length > 0) return { kind: "error", clusters };
  if (pending) return { kind: "pending", clusters };
  if (leaves.length === 0) return { kind: "error", clusters };
  return { kind: "leaves", leaves, clusters };
}

const summary = (g: ClusterGraph) => ({
  kind: g.kind,
  ...(g.kind === "leaves" ? { leaves: [...g.leaves] } : {}),
  clusters: [...g.clusters].sort(),
});

describe("resolveClusterGraph", () => {
  it("flattens depth-first, keeps a cluster reached twice at its first position", () => {
    const graph: Record<string, Node> = {
      root: { kind: "aggregate", children: ["a", "mid", "c"] },
      mid: { kind: "aggregate", children: ["b", "a", "c"] },
      a: { kind: "leaf" },
      b: { kind: "leaf" },
      c: { kind: "leaf" },
    };
    expect(summary(resolveClusterGraph("root", lookupOf(graph)))).toEqual({
      kind: "leaves",
      leaves: ["a", "b", "c"],
      clusters: ["a", "b", "c", "mid", "root"],
    });
  });

  it("refuses a loop and a graph deeper than 16 levels, naming the cluster", () => {
    const loop: Record<string, Node> = {
      root: { kind: "aggregate", children: ["x"] },
      x: { kind: "aggregate", children: ["leaf", "root"] },
      leaf: { kind: "leaf" },
    };
    const looped = resolveClusterGraph("root", lookupOf(loop));
    expect(looped).toMatchObject({ kind: "error", message: expect.stringContaining('"root" is below itself') });
    const chain = (levels: number): Record<string, Node> => {
      const graph: Record<string, Node> = { [`c${levels}`]: { kind: "leaf" } };
      for (let i = 0; i < levels; i++) graph[`c${i}`] = { kind: "aggregate", children: [`c${i + 1}`] };
      return graph;
    };
    // c0 (depth 0) .. c15 (depth 15) is the deepest allowed.
    expect(resolveClusterGraph("c0", lookupOf(chain(15))).kind).toBe("leaves");
    expect(resolveClusterGraph("c0", lookupOf(chain(16)))).toMatchObject({
      kind: "error",
      message: expect.stringContaining('deeper than 16 levels at "c16"'),
    });
  });

  it("is pending while a cluster has not arrived, and an error anywhere wins over pending", () => {
    const graph: Record<string, Node> = { root: { kind: "aggregate", children: ["a", "b"] }, b: { kind: "error" } };
    expect(resolveClusterGraph("root", lookupOf({ ...graph, b: { kind: "leaf" } })).kind).toBe("pending");
    expect(resolveClusterGraph("root", lookupOf(graph))).toMatchObject({ kind: "error", message: "b failed" });
  });

  it("agrees with a plain recursive walk on random graphs", () => {
    const names = Array.from({ length: 8 }, (_, i) => `n${i}`);
    const node: fc.Arbitrary<Node> = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ kind: "leaf" } as Node) },
      {
        weight: 6,
        arbitrary: fc
          .array(fc.constantFrom(...names), { minLength: 1, maxLength: 4 })
          .map((children) => ({ kind: "aggregate", children }) as Node),
      },
      { weight: 1, arbitrary: fc.constant({ kind: "error" } as Node) },
      { weight: 1, arbitrary: fc.constant({ kind: "missing" } as Node) },
    );
    const graphs = fc
      .tuple(...names.map(() => node))
      .map((nodes) => Object.fromEntries(names.map((n, i) => [n, nodes[i]!])));
    // Deep chains too, n0 -> ... -> n(k) with a leaf beside each level, on both sides of the depth limit.
    const chains = fc.integer({ min: 12, max: 20 }).map((k) => {
      const graph: Record<string, Node> = { [`n${k}`]: { kind: "leaf" } };
      for (let i = 0; i < k; i++) {
        graph[`n${i}`] = { kind: "aggregate", children: [`x${i}`, `n${i + 1}`] };
        graph[`x${i}`] = { kind: "leaf" };
      }
      return graph;
    });
    fc.assert(
      fc.property(fc.oneof(graphs, chains), (graph) => {
        const ours = summary(resolveClusterGraph("n0", lookupOf(graph)));
        expect(ours).toEqual(reference("n0", graph));
      }),
      { numRuns: 500 },
    );
  });
});
