// The relay's tests run real parts over HTTP/2 on 127.0.0.1: an upstream @xdskit/control-plane, one or more relays
// fed by it, and @xdskit/xds-client clients of the relays. Everything a test opens is closed by `closeAll`.
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type ManagementServer,
  type ManagementServerOptions,
} from "@xdskit/control-plane";
import {
  createXdsClient,
  type ResourceResult,
  type ResourceType,
  type ResourceWatcher,
  type WildcardWatcher,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";
import { createXdsRelay, type XdsRelay, type XdsRelayOptions } from "../../src/index.js";

export type ApiType = "GRPC" | "DELTA_GRPC";

const closers: (() => Promise<unknown>)[] = [];

/** Closes, last opened first, everything the helpers below opened. */
export async function closeAll(): Promise<void> {
  const pending = closers.splice(0).reverse();
  for (const close of pending) await close();
}

export async function startUpstream(options: ManagementServerOptions = {}): Promise<ManagementServer> {
  const server = await createManagementServer({ historyLimit: 5000, ...options });
  closers.push(() => server.close());
  return server;
}

/** A bootstrap for one server. */
export function bootstrapFor(address: string, nodeId: string, apiType: ApiType = "GRPC") {
  return {
    xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
    node: { id: nodeId },
  };
}

export async function startRelay(
  upstreamAddress: string,
  options: Partial<XdsRelayOptions> & { upstreamApi?: ApiType; nodeId?: string } = {},
): Promise<XdsRelay> {
  const { upstreamApi = "GRPC", nodeId = "relay", ...rest } = options;
  const relay = await createXdsRelay({
    retainUnusedMs: 0,
    historyLimit: 5000,
    ...rest,
    upstream: { bootstrap: bootstrapFor(upstreamAddress, nodeId, upstreamApi), env: {}, ...rest.upstream },
  });
  closers.push(() => relay.close());
  return relay;
}

export function startClient(address: string, nodeId: string, apiType: ApiType = "GRPC"): XdsClient {
  const client = createXdsClient({ bootstrap: bootstrapFor(address, nodeId, apiType), env: {} });
  closers.push(() => client.close());
  return client;
}

/** The four resources of one service: listener -> routes -> cluster -> endpoints on `port`. */
export function serviceChain(service: string, port: number) {
  return [
    buildListener({ name: service, routeConfigName: `${service}-route` }),
    buildRouteConfiguration({ name: `${service}-route`, cluster: `${service}-cluster` }),
    buildCluster({ name: `${service}-cluster` }),
    buildClusterLoadAssignment({
      clusterName: `${service}-cluster`,
      localities: [{ zone: "a", endpoints: [`127.0.0.1:${port}`] }],
    }),
  ];
}

export type WatchEvent<T> =
  | { kind: "resource"; resource: T; version: string }
  | { kind: "error"; error: XdsError }
  | { kind: "ambient"; error: XdsError }
  | { kind: "cleared" };

/** A watcher recording what it is told; `next()` waits (event-driven) for the next event. */
export interface Recorder<T> extends ResourceWatcher<T> {
  readonly events: WatchEvent<T>[];
  /** The next event not yet taken, waiting up to `timeoutMs` for it. */
  next(timeoutMs?: number): Promise<WatchEvent<T>>;
  /** The next resource, failing on anything else. */
  nextResource(timeoutMs?: number): Promise<T>;
  /** Events not taken yet. */
  pending(): WatchEvent<T>[];
}

export function recorder<T>(): Recorder<T> {
  const events: WatchEvent<T>[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  const push = (event: WatchEvent<T>) => {
    events.push(event);
    wake?.();
  };
  const next = async (timeoutMs = 5_000): Promise<WatchEvent<T>> => {
    if (taken >= events.length) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no watcher event within ${timeoutMs} ms`)), timeoutMs);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    }
    return events[taken++] as WatchEvent<T>;
  };
  return {
    events,
    next,
    async nextResource(timeoutMs) {
      const event = await next(timeoutMs);
      if (event.kind !== "resource") {
        throw new Error(`expected a resource, got ${event.kind}${"error" in event ? `: ${event.error.message}` : ""}`);
      }
      return event.resource;
    },
    pending: () => events.slice(taken),
    onResourceChanged(result: ResourceResult<T>) {
      push(
        result.ok
          ? { kind: "resource", resource: result.resource, version: result.version }
          : { kind: "error", error: result.error },
      );
    },
    onAmbientError(error: XdsError) {
      push({ kind: "ambient", error });
    },
    onAmbientErrorCleared() {
      push({ kind: "cleared" });
    },
  };
}

/** Watches and records; the watch is cancelled by `closeAll` with its client. */
export function watch<T>(
  client: XdsClient,
  type: ResourceType<T>,
  name: string,
  dynamicParameters?: Readonly<Record<string, string>>,
): Recorder<T> {
  const rec = recorder<T>();
  client.watch(type, name, rec, dynamicParameters ? { dynamicParameters } : undefined);
  return rec;
}

/** Resolves once `condition` holds, checked after each event the hooks report (no sleeps). */
export async function until(
  hooks: { on(type: "response" | "request" | "stream-close" | "stream-open", listener: () => void): () => void },
  condition: () => boolean,
  timeoutMs = 5_000,
): Promise<void> {
  if (condition()) return;
  await new Promise<void>((resolve, reject) => {
    const offs: (() => void)[] = [];
    const done = (error?: Error) => {
      clearTimeout(timer);
      for (const off of offs) off();
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (condition()) done();
    };
    for (const type of ["response", "request", "stream-close", "stream-open"] as const)
      offs.push(hooks.on(type, check));
    const timer = setTimeout(() => done(new Error(`condition not met within ${timeoutMs} ms`)), timeoutMs);
  });
}

/** The endpoints name of an EDS cluster update (what the tests' variants differ by). */
export function edsName(update: import("@xdskit/xds-client").ClusterUpdate): string {
  return update.type === "eds" ? update.edsServiceName : `(${update.type})`;
}

/** A wildcard watcher recording events as short strings (`resource a`, `error b does_not_exist`, `answered`). */
export interface WildcardRecorder<T> extends WildcardWatcher<T> {
  readonly events: string[];
  /** The next `count` events not taken yet, waiting for them (5 s at most). */
  take(count: number, timeoutMs?: number): Promise<string[]>;
  pending(): string[];
}

export function wildcardRecorder<T>(describe: (value: T) => string = () => ""): WildcardRecorder<T> {
  const events: string[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  const push = (event: string) => {
    events.push(event);
    wake?.();
  };
  return {
    events,
    async take(count, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length - taken < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} events, got ${JSON.stringify(events.slice(taken))}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const out = events.slice(taken, taken + count);
      taken += count;
      return out;
    },
    pending: () => events.slice(taken),
    onResourceChanged(name, result) {
      if (result.ok) {
        const text = describe(result.resource);
        push(`resource ${name}${text ? ` ${text}` : ""}`);
      } else push(`error ${name} ${result.error.kind}`);
    },
    onAmbientError(error, name) {
      push(`ambient ${name ?? "*"} ${error.kind}`);
    },
    onAmbientErrorCleared(name) {
      push(`cleared ${name ?? "*"}`);
    },
    onAnswered() {
      push("answered");
    },
  };
}

/** Sorts the first `count` events (what one response gives arrives in no promised order), the rest as they came. */
export function sortedHead(events: readonly string[], count: number): string[] {
  return [...events.slice(0, count)].sort().concat(events.slice(count));
}
