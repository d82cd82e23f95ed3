import { createRegistry, type Registry } from "@bufbuild/protobuf";
import type { Choice } from "@xdskit/control-plane/internal";
import { xdsRegistry } from "@xdskit/protos";
import { type ResourceType, StatusCode, type XdsClient, type XdsError } from "@xdskit/xds-client";
import type { Logger } from "./logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import { type Params, subscriptionText } from "./params.js";
import { type PassedResource, passThroughType } from "./pass-through-type.js";
import type { Answerable, RelayGroup } from "./relay-group.js";
import type { RelayTable } from "./relay-table.js";

export interface UpstreamOptions {
  readonly client: XdsClient;
  readonly table: RelayTable;
  readonly logger: Logger;
  /** Types whose SotW responses list every resource (LDS and CDS by default). */
  readonly fullStateTypeUrls: ReadonlySet<string>;
  /** How long an upstream subscription nobody downstream uses is kept (answered from cache if asked again). */
  readonly retainUnusedMs: number;
  readonly typeRegistry: Registry | undefined;
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

/** The status a relay refuses a `do_not_cache` resource with (docs/decisions.md#relay-per-node-resources). */
export const DO_NOT_CACHE_CODE = StatusCode.FAILED_PRECONDITION;

/**
 * The relay's upstream side: one `@xdskit/xds-client` watch per (type, name, parameter map) that some downstream
 * subscription uses, reference counted, and what each watch hears turned into the answer its downstream
 * subscriptions get (docs/decisions.md#relay-cache).
 */
export class Upstream {
  readonly #options: UpstreamOptions;
  readonly #registry: Registry;
  readonly #types = new Map<string, ResourceType<PassedResource>>();
  /** By type, name and parameters key. */
  readonly #subscriptions = new Map<string, Subscription>();
  /** Subscriptions made since the last batch: watched together, so the upstream gets one request for them. */
  #toWatch: Subscription[] = [];
  #closed = false;

  constructor(options: UpstreamOptions) {
    this.#options = options;
    this.#registry = options.typeRegistry ? createRegistry(xdsRegistry, options.typeRegistry) : xdsRegistry;
  }

  /** How many upstream subscriptions are open. */
  get size(): number {
    return this.#subscriptions.size;
  }

  /** A downstream subscription started: the upstream one it shares is opened if it is the first. */
  acquire(typeUrl: string, name: string, params: Params): void {
    if (this.#closed) return;
    const group = this.#options.table.group(typeUrl, name);
    const answerable = group.add(params);
    const id = subscriptionId(typeUrl, name, answerable.key);
    let sub = this.#subscriptions.get(id);
    if (!sub) {
      sub = {
        group,
        answerable,
        refs: 0,
        cancel: () => {},
        last: undefined,
        upstreamAnswered: false,
        idle: undefined,
      };
      this.#subscriptions.set(id, sub);
      if (this.#toWatch.length === 0) setImmediate(() => this.#watchBatch());
      this.#toWatch.push(sub);
    }
    sub.refs++;
    clearLongTimer(sub.idle);
    sub.idle = undefined;
  }

  /** A downstream subscription ended: the upstream one goes once unused for `retainUnusedMs`. */
  release(typeUrl: string, name: string, paramsKey: string): void {
    const id = subscriptionId(typeUrl, name, paramsKey);
    const sub = this.#subscriptions.get(id);
    if (!sub || --sub.refs > 0) return;
    const drop = () => {
      if (sub.refs > 0 || this.#subscriptions.get(id) !== sub) return;
      this.#subscriptions.delete(id);
      sub.cancel();
      sub.group.remove(sub.answerable.key);
      this.#options.table.dropIfEmpty(sub.group);
    };
    if (this.#options.retainUnusedMs <= 0) drop();
    else {
      // From the options: any length (docs/decisions.md#long-timers).
      sub.idle = setLongTimeout(drop, this.#options.retainUnusedMs);
      sub.idle.unref();
    }
  }

  /** Cancels every watch (the client is closed by its owner). */
  close(): void {
    this.#closed = true;
    for (const sub of this.#subscriptions.values()) {
      clearLongTimer(sub.idle);
      sub.cancel();
    }
    this.#subscriptions.clear();
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
    const answer = (choice: Choice, fromUpstream = true) => {
      if (this.#closed) return;
      sub.upstreamAnswered = fromUpstream;
      if (group.answer(answerable, choice)) this.#options.table.changed(group.typeUrl, group.name, answerable.params);
    };
    const relayed = (passed: PassedResource): void => {
      if (passed.doNotCache) {
        sub.last = undefined;
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

function subscriptionId(typeUrl: string, name: string, paramsKey: string): string {
  return `${typeUrl.length}:${typeUrl}${name.length}:${name}${paramsKey}`;
}

function safeVariant(group: RelayGroup, passed: PassedResource) {
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
