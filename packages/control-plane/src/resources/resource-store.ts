import type { Registry } from "@bufbuild/protobuf";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { Logger } from "../logger.js";
import type { ResourceSet } from "./resource-set.js";
import { type ResourceSetDeps, ResourceSetImpl } from "./resource-set.js";

/**
 * Which nodes a resource set is served to: a node id, or a predicate on the `Node` a stream sent in its first
 * request. Streams whose first request carried no node match no selector.
 */
export type NodeSelector = string | { readonly nodeId: string } | ((node: Node) => boolean);

/** The resources served to the nodes a selector picks, instead of the server's default set. */
export interface NodeScope extends ResourceSet {
  /** Stops serving this set: its streams move to the next matching scope, or the default set. */
  dispose(): void;
}

interface ScopeRecord {
  readonly matches: (node: Node) => boolean;
  readonly set: ResourceSetImpl;
}

export interface ResourceStoreDeps {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly allowOverlappingVariants: boolean;
  readonly contentVersions: boolean;
  readonly onChange: ResourceSetDeps["onChange"];
  readonly onScopesChanged: () => void;
}

/**
 * The default set plus the node scopes, in the order they were added: the first scope that matches wins. Beside
 * them, the DPDS resources `setDynamicParameters` serves per node, each in a set of its own that wins over the
 * node's set for the DPDS type only, so a node told its parameters still shares every other resource
 * (docs/decisions.md#serving-dpds).
 */
export class ResourceStore {
  readonly defaultSet: ResourceSetImpl;
  readonly #scopes: ScopeRecord[] = [];
  /** By selector identity (`id:<node id>`, or the predicate itself), in the order first set. */
  readonly #dynamicParameters = new Map<unknown, ScopeRecord>();
  readonly #deps: ResourceStoreDeps;
  #version = 0;

  constructor(deps: ResourceStoreDeps) {
    this.#deps = deps;
    this.defaultSet = this.#newSet();
  }

  resolve(node: Node | undefined): ResourceSetImpl {
    return this.#first(this.#scopes, node) ?? this.defaultSet;
  }

  /** The DPDS set `setDynamicParameters` gave the node, if any. */
  resolveDynamicParameters(node: Node | undefined): ResourceSetImpl | undefined {
    return this.#first(this.#dynamicParameters.values(), node);
  }

  /**
   * The DPDS set of the nodes `selector` picks, created empty on first use (the same selector, by node id or by
   * predicate identity, finds the same set).
   */
  dynamicParametersSet(selector: NodeSelector): ResourceSetImpl {
    const identity = selectorIdentity(selector);
    const existing = this.#dynamicParameters.get(identity);
    if (existing) return existing.set;
    const record = { matches: toMatcher(selector), set: this.#newSet() };
    this.#dynamicParameters.set(identity, record);
    this.#deps.onScopesChanged();
    return record.set;
  }

  /** Stops serving the DPDS set of `selector`; false if it had none. */
  removeDynamicParametersSet(selector: NodeSelector): boolean {
    if (!this.#dynamicParameters.delete(selectorIdentity(selector))) return false;
    this.#deps.onScopesChanged();
    return true;
  }

  #first(records: Iterable<ScopeRecord>, node: Node | undefined): ResourceSetImpl | undefined {
    if (node === undefined) return undefined;
    for (const scope of records) {
      let matched = false;
      try {
        matched = scope.matches(node);
      } catch (error) {
        this.#deps.logger.warn(`node selector threw for node "${node.id}"; treated as no match`, error);
      }
      if (matched) return scope.set;
    }
    return undefined;
  }

  addScope(selector: NodeSelector): NodeScope {
    const matches = toMatcher(selector);
    const set = this.#newSet();
    const record: ScopeRecord = { matches, set };
    this.#scopes.push(record);
    const scope = Object.assign(set, {
      dispose: () => {
        const index = this.#scopes.indexOf(record);
        if (index < 0) return;
        this.#scopes.splice(index, 1);
        this.#deps.onScopesChanged();
      },
    });
    this.#deps.onScopesChanged();
    return scope;
  }

  #newSet(): ResourceSetImpl {
    return new ResourceSetImpl({
      registry: this.#deps.registry,
      nextVersion: () => ++this.#version,
      onChange: this.#deps.onChange,
      allowOverlappingVariants: this.#deps.allowOverlappingVariants,
      contentVersions: this.#deps.contentVersions,
    });
  }
}

function nodeIdOf(selector: string | { readonly nodeId: string }): string {
  const nodeId = typeof selector === "string" ? selector : selector.nodeId;
  if (typeof nodeId !== "string" || nodeId === "")
    throw new TypeError("node selector: nodeId must be a non-empty string");
  return nodeId;
}

function toMatcher(selector: NodeSelector): (node: Node) => boolean {
  if (typeof selector === "function") return selector;
  const nodeId = nodeIdOf(selector);
  return (node) => node.id === nodeId;
}

function selectorIdentity(selector: NodeSelector): unknown {
  return typeof selector === "function" ? selector : `id:${nodeIdOf(selector)}`;
}
