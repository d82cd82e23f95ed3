// Resources that depend on who asks (docs/decisions.md#relay-per-node-resources): the relay fetches them on one
// upstream stream per downstream node, which carries that node's identity (its own `@xdskit/xds-client`, the relay's
// bootstrap with the node's `node`), answers them into a table of that node's own, and serves that table to that
// node's streams only. At most `maxNodes` such streams are open at once; a node past it is told
// RESOURCE_EXHAUSTED for each such subscription. A node's stream closes as soon as none of its subscriptions needs it.
import type { Registry } from "@bufbuild/protobuf";
import type { ChangedVariants } from "@xdskit/control-plane/internal";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { type Bootstrap, createXdsClient, StatusCode, type XdsClient, type XdsClientOptions } from "@xdskit/xds-client";
import { bootstrapConfigFor, nodeKey } from "./bootstrap-config.js";
import type { Logger } from "./logger.js";
import { type Params, paramsKey } from "./params.js";
import { RelayTable, type VersionCounter } from "./relay-table.js";
import { NameBudgetError, Upstream, type UpstreamTypeInfo } from "./upstream.js";

export interface PerNodeOptions {
  /** The relay's upstream bootstrap: each node's client uses it with the node's `node`. */
  readonly bootstrap: Bootstrap;
  /** The rest of the relay's upstream client options (env, logger, features, connect timeout...). */
  readonly clientOptions: Omit<XdsClientOptions, "bootstrap" | "target">;
  readonly counter: VersionCounter;
  readonly logger: Logger;
  readonly fullStateTypeUrls: ReadonlySet<string>;
  readonly typeRegistry: Registry | undefined;
  readonly maxNamesPerType: number;
  /** Per-node upstream streams open at once. */
  readonly maxNodes: number;
  /** Adds a node's client to the relay's CSDS; returns the function that takes it out. */
  readonly register: (client: XdsClient) => () => void;
}

interface NodeUpstream {
  readonly key: string;
  readonly nodeId: string;
  readonly table: RelayTable;
  /** Undefined: refused (over the limit, or no node): its subscriptions are answered with `refusal`. */
  readonly upstream: Upstream | undefined;
  readonly refusal: { readonly code: number; readonly message: string } | undefined;
  /** Refused subscriptions, by type, name and parameters key, and how many downstream subscriptions use each. */
  readonly refused: Map<string, number>;
  /** Takes its client out of the relay's CSDS. */
  readonly unregister: () => void;
}

/** What one per-node upstream stream holds, for monitoring. */
export interface NodeUpstreamInfo {
  readonly nodeId: string;
  readonly types: readonly UpstreamTypeInfo[];
}

export class PerNodeUpstreams {
  readonly #options: PerNodeOptions;
  readonly #nodes = new Map<string, NodeUpstream>();
  #open = 0;
  #closed = false;
  /** Where a node's table reports its changes: the server wakes the streams they may concern. */
  #notify: ((changed: ChangedVariants) => void) | undefined;
  readonly #changed = (changed: ChangedVariants): void => this.#notify?.(changed);

  constructor(options: PerNodeOptions) {
    this.#options = options;
  }

  /** Given, once, where changes go (the server's wake-up, as for the relay's own table). */
  attach(notify: (changed: ChangedVariants) => void): void {
    this.#notify = notify;
  }

  /** The key of a node: equal for nodes the upstream cannot tell apart (id, cluster, locality, metadata). */
  keyOf(node: Node | undefined): string {
    return nodeKey(node);
  }

  /** The table a node's per-node resources are served from, if it has any. */
  tableOf(key: string): RelayTable | undefined {
    return this.#nodes.get(key)?.table;
  }

  /** Per-node upstream streams open. */
  get size(): number {
    return this.#open;
  }

  info(): NodeUpstreamInfo[] {
    return [...this.#nodes.values()].flatMap((n) =>
      n.upstream ? [{ nodeId: n.nodeId, types: n.upstream.info() }] : [],
    );
  }

  /** Makes room for `count` more names of a type on the node's stream (NameBudgetError when there is none). */
  makeRoom(node: Node | undefined, typeUrl: string, count: number): void {
    const upstream = this.#nodes.get(this.keyOf(node))?.upstream;
    if (upstream) upstream.makeRoom(typeUrl, count);
    else if (count > this.#options.maxNamesPerType) {
      throw new NameBudgetError(
        `the relay's upstream takes at most ${this.#options.maxNamesPerType} names of ${typeUrl} on a node's stream (maxUpstreamNamesPerType)`,
      );
    }
  }

  /** A downstream subscription of a node needs its per-node stream: opened (or refused) with the first. */
  acquire(node: Node | undefined, typeUrl: string, name: string, params: Params): void {
    if (this.#closed) return;
    const upstream = this.#nodeFor(node);
    if (upstream.upstream) {
      upstream.upstream.acquire(typeUrl, name, params);
      return;
    }
    const id = refusedId(typeUrl, name, paramsKey(params));
    const uses = upstream.refused.get(id) ?? 0;
    upstream.refused.set(id, uses + 1);
    if (uses > 0) return;
    const group = upstream.table.group(typeUrl, name);
    const answerable = group.add(params);
    const refusal = upstream.refusal as { code: number; message: string };
    if (group.answer(answerable, group.errorEntry(refusal.code, refusal.message, undefined))) {
      upstream.table.changed(typeUrl, name, params);
    }
  }

  release(node: Node | undefined, typeUrl: string, name: string, key: string): void {
    const nodeKey = this.keyOf(node);
    const upstream = this.#nodes.get(nodeKey);
    if (!upstream) return;
    if (upstream.upstream) upstream.upstream.release(typeUrl, name, key);
    else {
      const id = refusedId(typeUrl, name, key);
      const uses = (upstream.refused.get(id) ?? 0) - 1;
      if (uses > 0) upstream.refused.set(id, uses);
      else {
        upstream.refused.delete(id);
        const group = upstream.table.group(typeUrl, name);
        group.remove(key);
        upstream.table.dropIfEmpty(group);
      }
    }
    // Closed once nothing needs it, after this tick (a subscription may move back within it).
    queueMicrotask(() => this.#closeIfUnused(nodeKey, upstream));
  }

  /** Closes every node's stream and client. */
  async close(): Promise<void> {
    this.#closed = true;
    const closing = [...this.#nodes.values()].map((upstream) => this.#closeNode(upstream));
    this.#nodes.clear();
    await Promise.all(closing);
  }

  #nodeFor(node: Node | undefined): NodeUpstream {
    const key = this.keyOf(node);
    const known = this.#nodes.get(key);
    if (known) return known;
    const table = new RelayTable(this.#options.counter);
    table.attach(this.#changed);
    const nodeId = node?.id ?? "";
    let upstream: Upstream | undefined;
    let refusal: NodeUpstream["refusal"];
    let unregister = (): void => {};
    if (node === undefined || node.id === "") {
      refusal = {
        code: StatusCode.FAILED_PRECONDITION,
        message:
          "relay: a resource that depends on the client's node (do_not_cache) needs a stream that sends its node",
      };
    } else if (this.#open >= this.#options.maxNodes) {
      refusal = {
        code: StatusCode.RESOURCE_EXHAUSTED,
        message: `relay: ${this.#open} nodes have their own upstream stream for resources that depend on the node (do_not_cache), the most it opens (maxNodeUpstreams); node "${nodeId}" is refused until one closes`,
      };
      this.#options.logger.warn(refusal.message);
    } else {
      const { bootstrap, clientOptions } = this.#options;
      const client = createXdsClient({
        ...clientOptions,
        bootstrap: bootstrapConfigFor(bootstrap, node),
        target: `#relay node ${nodeId}`,
        features: { ...clientOptions.features, dynamicParameters: true, dataErrorHandling: true },
      });
      upstream = new Upstream({
        client,
        table,
        logger: this.#options.logger,
        fullStateTypeUrls: this.#options.fullStateTypeUrls,
        // Never kept once unused: what depends on the node is not cached (TP2's do_not_cache).
        retainUnusedMs: 0,
        typeRegistry: this.#options.typeRegistry,
        maxNamesPerType: this.#options.maxNamesPerType,
        doNotCache: "serve",
      });
      unregister = this.#options.register(client);
      this.#open++;
      this.#options.logger.info(`opened an upstream stream for node "${nodeId}" (resources that depend on the node)`);
    }
    const created: NodeUpstream = { key, nodeId, table, upstream, refusal, refused: new Map(), unregister };
    this.#nodes.set(key, created);
    return created;
  }

  #closeIfUnused(key: string, upstream: NodeUpstream): void {
    if (this.#nodes.get(key) !== upstream) return;
    const used = upstream.upstream ? upstream.upstream.size > 0 : upstream.refused.size > 0;
    if (used) return;
    this.#nodes.delete(key);
    void this.#closeNode(upstream);
  }

  #closeNode(upstream: NodeUpstream): Promise<void> {
    if (!upstream.upstream) return Promise.resolve();
    upstream.unregister();
    upstream.upstream.close();
    this.#open--;
    this.#options.logger.info(`closed the upstream stream of node "${upstream.nodeId}"`);
    return upstream.upstream.client.close();
  }
}

function refusedId(typeUrl: string, name: string, key: string): string {
  return `${typeUrl.length}:${typeUrl}${name.length}:${name}${key}`;
}
