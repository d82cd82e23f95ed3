import { createRegistry, type Registry } from "@bufbuild/protobuf";
import type { Choice } from "@xdskit/control-plane/internal";
import { xdsRegistry } from "@xdskit/protos";
import { type ResourceType, StatusCode, type XdsClient, type XdsError } from "@xdskit/xds-client";
import type { Logger } from "./logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import { type Params, paramsKey, subscriptionText } from "./params.js";
import { type PassedResource, passThroughType } from "./pass-through-type.js";
import type { Answerable, RelayGroup } from "./relay-group.js";
import type { RelayTable } from "./relay-table.js";
import { type UpstreamWildcard, watchWildcard } from "./upstream-wildcard.js";

export interface UpstreamOptions {
  readonly client: XdsClient;
  readonly table: RelayTable;
  readonly logger: Logger;
  /** Types whose SotW responses list every resource (LDS and CDS by default). */
  readonly fullStateTypeUrls: ReadonlySet<string>;
  /** How long an upstream subscription nobody downstream uses is kept (answered from cache if asked again). */
  readonly retainUnusedMs: number;
  readonly typeRegistry: Registry | undefined;
  /**
   * Upstream names per type this upstream stream may hold, subscriptions by name and wildcards (one each) together
   * (docs/decisions.md#relay-upstream-name-budget).
   */
  readonly maxNamesPerType: number;
  /**
   * What a `do_not_cache` resource does (docs/decisions.md#relay-per-node-resources): on a node's own upstream
   * stream it is served (`"serve"`); on the shared one, the name is handed over to per-node fetching (the function is
   * told, and the subscription is answered no more); `"refuse"` answers FAILED_PRECONDITION.
   */
  readonly doNotCache: "serve" | "refuse" | ((typeUrl: string, name: string) => void);
}

interface Subscription {
  readonly group: RelayGroup;
  readonly answerable: Answerable;
  refs: number;
  cancel: () => void;
  /** The last cacheable resource the upstream gave, for when an ambient error clears. */
  last: PassedResource | undefined;
  /**
   * The current answer is the upstream's (a resource, an error, does-not-exist), not one the relay made up while
   * it could not ask (a fallback, UNAVAILABLE): an outage leaves it as it is.
   */
  upstreamAnswered: boolean;
  idle: LongTimer | undefined;
}

/** The status a relay refuses a `do_not_cache` resource with, when told to (docs/decisions.md#relay-per-node-resources). */
export const DO_NOT_CACHE_CODE = StatusCode.FAILED_PRECONDITION;

/** A downstream request would take the upstream names of a type past the budget: nothing of it was subscribed. */
export class NameBudgetError extends Error {
  override readonly name = "NameBudgetError";
}

/** What one upstream stream holds of a type: its upstream names (named subscriptions and wildcards). */
export interface UpstreamTypeInfo {
  readonly typeUrl: string;
  /** Subscriptions by name (per parameter map), retained ones included. */
  readonly names: number;
  /** The parameter maps of its wildcard subscriptions (`{}` for one without parameters). */
  readonly wildcards: readonly Params[];
}

/**
 * One upstream stream's worth of subscriptions (the relay's own client, or a node's, docs/decisions.md#relay-cache):
 * one `@xdskit/xds-client` watch per (type, name, parameter map) that some downstream subscription uses, and one
 * wildcard watch per (type, parameter map), reference counted, and what each watch hears turned into the answer its
 * downstream subscriptions get.
 */
export class Upstream {
  readonly #options: UpstreamOptions;
  readonly #registry: Registry;
  readonly #types = new Map<string, ResourceType<PassedResource>>();
  /** By type, name and parameters key. */
  readonly #subscriptions = new Map<string, Subscription>();
  /** By type and parameters key. */
  readonly #wildcards = new Map<string, UpstreamWildcard>();
  /** Upstream names per type (subscriptions by name and wildcards). */
  readonly #names = new Map<string, number>();
  /** Subscriptions made since the last batch: watched together, so the upstream gets one request for them. */
  #toWatch: Subscription[] = [];
  #closed = false;

  constructor(options: UpstreamOptions) {
    this.#options = options;
    this.#registry = options.typeRegistry ? createRegistry(xdsRegistry, options.typeRegistry) : xdsRegistry;
  }

  get client(): XdsClient {
    return this.#options.client;
  }

  /** How many upstream subscriptions are open (by name, and wildcards). */
  get size(): number {
    return this.#subscriptions.size + this.#wildcards.size;
  }

  /** What the stream holds, per type. */
  info(): UpstreamTypeInfo[] {
    const byType = new Map<string, { names: number; wildcards: Params[] }>();
    const of = (typeUrl: string) => {
      let info = byType.get(typeUrl);
      if (!info) {
        info = { names: 0, wildcards: [] };
        byType.set(typeUrl, info);
      }
      return info;
    };
    for (const sub of this.#subscriptions.values()) of(sub.group.typeUrl).names++;
    for (const wildcard of this.#wildcards.values()) of(wildcard.typeUrl).wildcards.push(wildcard.params);
    return [...byType].map(([typeUrl, info]) => ({ typeUrl, ...info }));
  }

  /** Whether the upstream subscription of (type, name, parameters key) is open. */
  has(typeUrl: string, name: string, key: string): boolean {
    return this.#subscriptions.has(subscriptionId(typeUrl, name, key));
  }

  hasWildcard(typeUrl: string, key: string): boolean {
    return this.#wildcards.has(wildcardId(typeUrl, key));
  }

  /**
   * Makes room for `count` more upstream names of a type within the budget, dropping subscriptions kept only for
   * `retainUnusedMs` if need be; throws NameBudgetError when even that is not enough (nothing dropped then).
   */
  makeRoom(typeUrl: string, count: number): void {
    if (count <= 0) return;
    const budget = this.#options.maxNamesPerType;
    const used = this.#names.get(typeUrl) ?? 0;
    if (used + count <= budget) return;
    const idle = [...this.#subscriptions].filter(([, sub]) => sub.refs === 0 && sub.group.typeUrl === typeUrl);
    const idleWildcards = [...this.#wildcards].filter(([, w]) => w.refs === 0 && w.typeUrl === typeUrl);
    if (used - idle.length - idleWildcards.length + count > budget) {
      throw new NameBudgetError(
        `the relay's upstream takes at most ${budget} names of ${typeUrl} (maxUpstreamNamesPerType), ${used} are in use, and this request needs ${count} more`,
      );
    }
    let over = used + count - budget;
    for (const [id, sub] of idle) {
      if (over-- <= 0) break;
      this.#drop(id, sub);
    }
    for (const [id, wildcard] of idleWildcards) {
      if (over-- <= 0) break;
      this.#dropWildcard(id, wildcard);
    }
  }

  /** A downstream subscription started: the upstream one it shares is opened if it is the first. */
  acquire(typeUrl: string, name: string, params: Params): void {
    if (this.#closed) return;
    const id = subscriptionId(typeUrl, name, paramsKey(params));
    let sub = this.#subscriptions.get(id);
    if (!sub) {
      const group = this.#options.table.group(typeUrl, name);
      sub = {
        group,
        answerable: group.add(params),
        refs: 0,
        cancel: () => {},
        last: undefined,
        upstreamAnswered: false,
        idle: undefined,
      };
      this.#subscriptions.set(id, sub);
      this.#count(typeUrl, 1);
      if (this.#toWatch.length === 0) setImmediate(() => this.#watchBatch());
      this.#toWatch.push(sub);
    }
    sub.refs++;
    clearLongTimer(sub.idle);
    sub.idle = undefined;
  }

  /** A downstream subscription ended: the upstream one goes once unused for `retainUnusedMs`. */
  release(typeUrl: string, name: string, key: string): void {
    const id = subscriptionId(typeUrl, name, key);
    const sub = this.#subscriptions.get(id);
    if (!sub || --sub.refs > 0) return;
    this.#retain(sub, () => this.#drop(id, sub));
  }

  /** A downstream wildcard subscription started: the upstream wildcard it shares is opened if it is the first. */
  acquireWildcard(typeUrl: string, params: Params): void {
    if (this.#closed) return;
    const id = wildcardId(typeUrl, paramsKey(params));
    let wildcard = this.#wildcards.get(id);
    if (!wildcard) {
      wildcard = watchWildcard({
        client: this.#options.client,
        table: this.#options.table,
        type: this.#typeOf(typeUrl),
        params,
        logger: this.#options.logger,
        doNotCache: this.#options.doNotCache === "serve" ? "serve" : "leave-out",
      });
      this.#wildcards.set(id, wildcard);
      this.#count(typeUrl, 1);
    }
    wildcard.refs++;
    clearLongTimer(wildcard.idle);
    wildcard.idle = undefined;
  }

  releaseWildcard(typeUrl: string, key: string): void {
    const id = wildcardId(typeUrl, key);
    const wildcard = this.#wildcards.get(id);
    if (!wildcard || --wildcard.refs > 0) return;
    this.#retain(wildcard, () => this.#dropWildcard(id, wildcard));
  }

  /** Cancels every watch (the client is closed by its owner). */
  close(): void {
    this.#closed = true;
    for (const sub of this.#subscriptions.values()) {
      clearLongTimer(sub.idle);
      sub.cancel();
    }
    this.#subscriptions.clear();
    for (const wildcard of this.#wildcards.values()) {
      clearLongTimer(wildcard.idle);
      wildcard.close();
    }
    this.#wildcards.clear();
    this.#names.clear();
  }

  #retain(held: { idle: LongTimer | undefined; refs: number }, drop: () => void): void {
    if (this.#options.retainUnusedMs <= 0) drop();
    else {
      // From the options: any length (docs/decisions.md#long-timers).
      held.idle = setLongTimeout(() => {
        if (held.refs === 0) drop();
      }, this.#options.retainUnusedMs);
      held.idle.unref();
    }
  }

  #drop(id: string, sub: Subscription): void {
    if (this.#subscriptions.get(id) !== sub) return;
    clearLongTimer(sub.idle);
    this.#subscriptions.delete(id);
    this.#count(sub.group.typeUrl, -1);
    sub.cancel();
    sub.group.remove(sub.answerable.key);
    this.#options.table.dropIfEmpty(sub.group);
  }

  #dropWildcard(id: string, wildcard: UpstreamWildcard): void {
    if (this.#wildcards.get(id) !== wildcard) return;
    clearLongTimer(wildcard.idle);
    this.#wildcards.delete(id);
    this.#count(wildcard.typeUrl, -1);
    wildcard.close();
  }

  #count(typeUrl: string, delta: number): void {
    const count = (this.#names.get(typeUrl) ?? 0) + delta;
    if (count > 0) this.#names.set(typeUrl, count);
    else this.#names.delete(typeUrl);
  }

  #watchBatch(): void {
    const batch = this.#toWatch;
    this.#toWatch = [];
    if (this.#closed) return;
    for (const sub of batch) {
      const id = subscriptionId(sub.group.typeUrl, sub.group.name, sub.answerable.key);
      // Dropped before its turn (its last downstream subscription went at once, with retainUnusedMs 0).
      if (this.#subscriptions.get(id) === sub) sub.cancel = this.#watch(sub);
    }
  }

  #typeOf(typeUrl: string): ResourceType<PassedResource> {
    let type = this.#types.get(typeUrl);
    if (!type) {
      type = passThroughType(typeUrl, this.#options.fullStateTypeUrls.has(typeUrl), this.#registry);
      this.#types.set(typeUrl, type);
    }
    return type;
  }

  #watch(sub: Subscription): () => void {
    const { group, answerable } = sub;
    const { doNotCache } = this.#options;
    const answer = (choice: Choice, fromUpstream = true) => {
      if (this.#closed) return;
      sub.upstreamAnswered = fromUpstream;
      if (group.answer(answerable, choice)) this.#options.table.changed(group.typeUrl, group.name, answerable.params);
    };
    const relayed = (passed: PassedResource): void => {
      if (passed.doNotCache && doNotCache !== "serve") {
        sub.last = undefined;
        if (typeof doNotCache === "function") {
          // Fetched per node from now on; what this stream got for the relay's own node is served to nobody.
          doNotCache(group.typeUrl, group.name);
          return;
        }
        const text = subscriptionText(group.name, answerable.params);
        this.#options.logger.warn(`${text}: the upstream marks it do_not_cache; refused downstream`);
        const variant = safeVariant(group, passed);
        answer(group.errorEntry(DO_NOT_CACHE_CODE, doNotCacheMessage(group.name), variant));
        return;
      }
      sub.last = passed;
      answer(group.resourceEntry(passed));
    };
    const failed = (error: XdsError, ambient: boolean): void => {
      switch (error.kind) {
        case "connection":
        case "timeout":
          // Unreachable, or no answer in time: what the upstream answered stays served (a resource, an error, or
          // does-not-exist); a subscription it has not answered falls back to a cached variant its parameters
          // match, else is told the upstream is unavailable.
          if (ambient || sub.upstreamAnswered) return;
          answer(
            group.fallbackFor(answerable.params) ??
              group.errorEntry(StatusCode.UNAVAILABLE, `relay: ${error.detail}`, answerable.lastVariant),
            false,
          );
          return;
        case "does_not_exist":
          // Deleted upstream (A88 kept the relay's copy: downstream clients apply their own rules), or never there.
          answer(undefined);
          return;
        case "nacked":
          // The relay could not read what the upstream sent: downstream keeps what it has.
          if (ambient) return;
          answer(group.errorEntry(error.code, `relay: ${error.detail}`, answerable.lastVariant));
          return;
        default:
          // TP3 errors from the upstream, and names the relay's client refuses (unknown authority, bad name).
          answer(group.errorEntry(error.code, error.detail, answerable.lastVariant));
      }
    };
    return this.#options.client.watch(
      this.#typeOf(group.typeUrl),
      group.name,
      {
        onResourceChanged: (result) => (result.ok ? relayed(result.resource) : failed(result.error, false)),
        onAmbientError: (error) => failed(error, true),
        onAmbientErrorCleared: () => {
          if (sub.last) relayed(sub.last);
        },
      },
      { dynamicParameters: answerable.params },
    );
  }
}

function subscriptionId(typeUrl: string, name: string, key: string): string {
  return `${typeUrl.length}:${typeUrl}${name.length}:${name}${key}`;
}

function wildcardId(typeUrl: string, key: string): string {
  return `${typeUrl.length}:${typeUrl}${key}`;
}

export function safeVariant(group: RelayGroup, passed: PassedResource) {
  try {
    return group.variantOf(passed.resourceName?.dynamicParameterConstraints);
  } catch {
    return undefined;
  }
}

export function doNotCacheMessage(name: string): string {
  return (
    `the upstream marks ${name} do_not_cache (it depends on who asks), and this relay serves only what it can cache: ` +
    "fetch it from the authoritative server"
  );
}
