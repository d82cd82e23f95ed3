// An Envoy-style ADS client for the tests: requests built from @xdskit/protos messages, sent over real HTTP/2 with
// connect-node, responses read raw (names and removals as a client library would not show them), ACKed by hand.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { type ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { xdsRegistry } from "@xdskit/protos";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import {
  type DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

/** Reads a stream's responses in the background; `next` waits for the next one. */
export interface RawStream<Res> {
  next(timeoutMs?: number): Promise<Res>;
  /** Resolves if nothing arrives within `ms` (a real wait: only for "nothing more is sent"). */
  none(ms?: number): Promise<void>;
  /** Resolves with the status once the stream ends (undefined for OK). */
  ended(timeoutMs?: number): Promise<ConnectError | undefined>;
  close(): void;
}

function reader<Res>(iterable: AsyncIterable<Res>, abort: AbortController): RawStream<Res> {
  const buffered: Res[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let error: ConnectError | undefined;
  void (async () => {
    try {
      for await (const item of iterable) {
        buffered.push(item);
        wake?.();
      }
    } catch (e) {
      error = e as ConnectError;
    }
    done = true;
    wake?.();
  })();
  const waitFor = async (cond: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return {
    async next(timeoutMs = 5000) {
      await waitFor(() => buffered.length > 0 || done, timeoutMs, "a response");
      const item = buffered.shift();
      if (item === undefined) throw new Error(`the stream ended instead: ${String(error?.message)}`);
      return item;
    },
    async none(ms = 200) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (buffered.length > 0) throw new Error(`expected nothing, got ${buffered.length} responses`);
    },
    async ended(timeoutMs = 5000) {
      await waitFor(() => done, timeoutMs, "the end of the stream");
      return error;
    },
    close: () => abort.abort(),
  };
}

function adsClient(url: string) {
  return createClient(AggregatedDiscoveryService, createGrpcTransport({ baseUrl: url }));
}

export interface RawSotw extends RawStream<DiscoveryResponse> {
  send(request: MessageInitShape<typeof DiscoveryRequestSchema>): Promise<void>;
}

export function rawSotw(url: string): RawSotw {
  const requests = createWritableIterable<ReturnType<typeof create<typeof DiscoveryRequestSchema>>>();
  const abort = new AbortController();
  const stream = reader(adsClient(url).streamAggregatedResources(requests, { signal: abort.signal }), abort);
  return { ...stream, send: (request) => requests.write(create(DiscoveryRequestSchema, request)) };
}

export interface RawDelta extends RawStream<DeltaDiscoveryResponse> {
  send(request: MessageInitShape<typeof DeltaDiscoveryRequestSchema>): Promise<void>;
}

export function rawDelta(url: string): RawDelta {
  const requests = createWritableIterable<MessageInitShape<typeof DeltaDiscoveryRequestSchema>>();
  const abort = new AbortController();
  const stream = reader(adsClient(url).deltaAggregatedResources(requests, { signal: abort.signal }), abort);
  return { ...stream, send: (request) => requests.write(request) };
}

/** The name of a resource as sent: its wrapper's (`resource_name` or `name`), else the message's `name`. */
function nameOfResource(resource: Resource | undefined, fallback: string): string {
  return resource?.resourceName?.name || resource?.name || fallback;
}

/** A SotW response's resource names, sorted (unwrapping `Resource`). */
export function sotwNames(response: DiscoveryResponse): string[] {
  return response.resources
    .map((any) => {
      if (any.typeUrl.endsWith(ResourceSchema.typeName)) return nameOfResource(anyUnpack(any, ResourceSchema), "?");
      const message = anyUnpack(any, xdsRegistry) as { name?: string } | undefined;
      return message?.name ?? "?";
    })
    .sort();
}

/** A delta response as `+name` for each resource and `-name` for each removal, sorted. */
export function deltaChanges(response: DeltaDiscoveryResponse): string[] {
  return [
    ...response.resources.map((r) => `+${nameOfResource(r, "?")}`),
    ...response.removedResources.map((name) => `-${name}`),
    ...response.removedResourceNames.map((r) => `-${r.name}`),
  ].sort();
}
