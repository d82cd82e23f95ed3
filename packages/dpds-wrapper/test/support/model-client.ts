// An in-memory XdsClient for the wrapper's fine-grained state-machine tests: subscriptions keyed by (type, name,
// parameters) as the real client keys its cache; the test answers each one. Like the real client, callbacks run
// later, in order, from one queue; a new watcher of an answered subscription gets its answer; a cancelled watcher
// hears nothing more. The real client is used over HTTP/2 in the other tests.
import { create } from "@bufbuild/protobuf";
import { ClientConfigSchema } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import {
  parseBootstrap,
  type ResourceResult,
  type ResourceType,
  type ResourceWatcher,
  type XdsClient,
  type XdsError,
  type XdsFeatures,
} from "@xdskit/xds-client";

export type Params = Readonly<Record<string, string>>;

export interface ModelSubscription {
  readonly typeUrl: string;
  readonly name: string;
  readonly parameters: Params;
  /** `name{k=v,...}`, keys sorted. */
  readonly label: string;
  readonly watchers: Set<ResourceWatcher<unknown>>;
  result: ResourceResult<unknown> | undefined;
}

export interface ModelClient extends XdsClient {
  /** Active subscriptions (with a watcher), as labels, sorted. */
  labels(typeUrl?: string): string[];
  subscription(typeUrl: string, label: string): ModelSubscription | undefined;
  /**
   * Sets a subscription's answer and tells its watchers (later, through the queue). As in A88, an error for a
   * subscription that holds a resource is ambient, and the resource stays.
   */
  answer(typeUrl: string, label: string, result: ResourceResult<unknown>): void;
  /** Tells a subscription's watchers an ambient error. */
  ambient(typeUrl: string, label: string, error: XdsError): void;
  /** What the callbacks returned, in order (flow control). */
  readonly returned: unknown[];
  /** Runs every queued callback. */
  flush(): Promise<void>;
}

export function labelOf(name: string, parameters: Params): string {
  const keys = Object.keys(parameters).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}=${parameters[k]}`).join(",")}}`;
}

export function createModelClient(
  bootstrap: Record<string, unknown> = {
    xds_servers: [{ server_uri: "localhost:1", channel_creds: [{ type: "insecure" }] }],
    node: { id: "model-node" },
  },
  features: Partial<XdsFeatures> = {},
): ModelClient {
  const parsed = parseBootstrap(bootstrap);
  const subs = new Map<string, ModelSubscription>();
  const queue: (() => unknown)[] = [];
  const returned: unknown[] = [];
  let draining = false;
  const drain = () => {
    draining = false;
    while (queue.length > 0) returned.push(queue.shift()!());
  };
  const push = (run: () => unknown) => {
    queue.push(run);
    if (!draining) {
      draining = true;
      queueMicrotask(drain);
    }
  };
  const key = (typeUrl: string, label: string) => `${typeUrl} ${label}`;
  const notify = (sub: ModelSubscription, watcher: ResourceWatcher<unknown>, result: ResourceResult<unknown>) =>
    push(() => (sub.watchers.has(watcher) ? watcher.onResourceChanged(result) : undefined));

  return {
    bootstrap: parsed,
    features: Object.freeze({
      dataErrorHandling: true,
      dynamicParameters: true,
      orcaLrsPropagation: true,
      fallback: true,
      federation: true,
      ...features,
    }),
    returned,
    watchAll() {
      throw new Error("the model client has no wildcard watch");
    },
    watch<T>(
      type: ResourceType<T>,
      name: string,
      watcher: ResourceWatcher<T>,
      options?: { dynamicParameters?: Params },
    ) {
      // As the real client: an authority's own parameters for its xdstp names, else the root's.
      const authority = name.startsWith("xdstp://")
        ? parsed.authorities.get(name.slice(8, name.indexOf("/", 8)))
        : undefined;
      const parameters = options?.dynamicParameters ?? authority?.dynamicParameters ?? parsed.dynamicParameters;
      const label = labelOf(name, parameters);
      const k = key(type.typeUrl, label);
      let sub = subs.get(k);
      if (!sub) {
        sub = { typeUrl: type.typeUrl, name, parameters, label, watchers: new Set(), result: undefined };
        subs.set(k, sub);
      }
      const w = watcher as ResourceWatcher<unknown>;
      const s = sub;
      s.watchers.add(w);
      if (s.result) notify(s, w, s.result);
      return () => {
        s.watchers.delete(w);
        if (s.watchers.size === 0) subs.delete(k);
      };
    },
    labels(typeUrl) {
      return [...subs.values()]
        .filter((s) => typeUrl === undefined || s.typeUrl === typeUrl)
        .map((s) => s.label)
        .sort();
    },
    subscription: (typeUrl, label) => subs.get(key(typeUrl, label)),
    answer(typeUrl, label, result) {
      const sub = subs.get(key(typeUrl, label));
      if (!sub) throw new Error(`no subscription ${label} of ${typeUrl}`);
      if (!result.ok && sub.result?.ok) {
        for (const w of sub.watchers) push(() => (sub.watchers.has(w) ? w.onAmbientError(result.error) : undefined));
        return;
      }
      sub.result = result;
      for (const w of sub.watchers) notify(sub, w, result);
    },
    ambient(typeUrl, label, error) {
      const sub = subs.get(key(typeUrl, label));
      if (!sub) throw new Error(`no subscription ${label} of ${typeUrl}`);
      for (const w of sub.watchers) push(() => (sub.watchers.has(w) ? w.onAmbientError(error) : undefined));
    },
    async flush() {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    },
    dumpResources: () => create(ClientConfigSchema, {}),
    async close() {
      subs.clear();
    },
  };
}
