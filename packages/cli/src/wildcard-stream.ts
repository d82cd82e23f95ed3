// A wildcard subscription to one resource type on an ADS stream of its own, for `xdskit list` and `xdskit watch
// <type> '*'`: @xdskit/xds-client watches resources by name, so these speak the protocol directly. Each response is
// decoded with the type's decoder (the four built-in types validated as a gRPC client validates them), then ACKed,
// or NACKed with every problem. After a failure the stream is opened again, with backoff, until the signal aborts.
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { type Node, NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import {
  type DeltaDiscoveryRequestSchema,
  type DiscoveryRequestSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Bootstrap, DecodeResult, ResourceType } from "@xdskit/xds-client";
import { sleep } from "./command.js";
import { transportFor } from "./server-transport.js";

const RESOURCE_WRAPPER = "type.googleapis.com/envoy.service.discovery.v3.Resource";
const INVALID_ARGUMENT = 3;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/** One resource of a response that is new or differs from what the stream had. */
export interface WildcardResource {
  readonly name: string;
  /** The resource's own version (delta), or the response's (SotW). */
  readonly version: string;
  readonly result: DecodeResult<unknown>;
}

export interface WildcardUpdate {
  /** `version_info` (SotW) or `system_version_info` (delta) of the response. */
  readonly version: string;
  /** New or changed resources. */
  readonly resources: readonly WildcardResource[];
  /** Names the server removed: listed by delta, or missing from a SotW response of a full-state type (LDS, CDS). */
  readonly removed: readonly string[];
  /** Every name the server has sent and not removed, sorted. */
  readonly names: readonly string[];
}

export interface WildcardOptions {
  readonly bootstrap: Bootstrap;
  readonly type: ResourceType<unknown>;
  /** Delta xDS; default: the server's `api_type`. */
  readonly delta?: boolean;
  readonly signal: AbortSignal;
  readonly onUpdate: (update: WildcardUpdate) => void;
  /**
   * The stream failed; it is opened again after a backoff, unless the status says trying again cannot help
   * (`permanentStatus`): then `runWildcard` rejects with the error, after this call.
   */
  readonly onError: (error: Error) => void;
}

/**
 * Codes after which opening the stream again cannot help: the server does not serve the method (a relay or server
 * that refuses what is asked), or refuses the caller or the request.
 */
const PERMANENT_CODES: ReadonlySet<Code> = new Set([
  Code.Unimplemented,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.InvalidArgument,
]);

/** The status code of a failure when it is one of those after which retrying cannot help, else undefined. */
export function permanentStatus(error: unknown): Code | undefined {
  const code = error instanceof ConnectError ? error.code : undefined;
  return code !== undefined && PERMANENT_CODES.has(code) ? code : undefined;
}

/** The node of the bootstrap, as an xDS client sends it. */
function nodeOf(bootstrap: Bootstrap): Node {
  const { node } = bootstrap;
  return create(NodeSchema, {
    id: node.id,
    cluster: node.cluster,
    ...(node.locality ? { locality: node.locality } : {}),
    ...(node.metadata ? { metadata: node.metadata as JsonObject } : {}),
    userAgentName: "xdskit-cli",
  });
}

/** What the stream holds: per name, the bytes last received, to tell new and changed resources apart. */
class Held {
  readonly #keys = new Map<string, string>();

  constructor(
    private readonly type: ResourceType<unknown>,
    private readonly bootstrap: Bootstrap,
  ) {}

  /** Decodes `any` and holds it; `changed` is undefined when the stream already had these bytes under its name. */
  take(any: Any, version: string, fallbackName: string): { name: string; changed?: WildcardResource } {
    const inner = any.typeUrl === RESOURCE_WRAPPER ? anyUnpack(any, ResourceSchema)?.resource : any;
    const context = { server: this.bootstrap.xdsServers[0]!, bootstrap: this.bootstrap, features: ALL_FEATURES };
    const result: DecodeResult<unknown> = inner
      ? this.type.decode(inner, context)
      : { ok: false, error: "a Resource wrapper without a resource" };
    const name = result.name ?? fallbackName;
    const key = `${any.typeUrl} ${Buffer.from(any.value).toString("base64")}`;
    if (this.#keys.get(name) === key) return { name };
    this.#keys.set(name, key);
    return { name, changed: { name, version, result } };
  }

  /** Forgets `names`; returns those it had, sorted. */
  remove(names: Iterable<string>): string[] {
    return [...names].filter((name) => this.#keys.delete(name)).sort();
  }

  names(): string[] {
    return [...this.#keys.keys()].sort();
  }
}

// The client's switches, all on (their defaults): decoding validates as a current gRPC client does.
const ALL_FEATURES = {
  dataErrorHandling: true,
  dynamicParameters: true,
  orcaLrsPropagation: true,
  fallback: true,
  federation: true,
};

/** The NACK detail for the resources that did not decode, or undefined when all did. */
function nackDetail(resources: readonly WildcardResource[]) {
  const errors = resources.flatMap((r) => (r.result.ok ? [] : [`${r.name}: ${r.result.error}`]));
  return errors.length === 0 ? undefined : { code: INVALID_ARGUMENT, message: errors.join("; ") };
}

/** Sends a request; a write that fails means the stream ended, which reading it reports. */
function send<T>(requests: { write(request: T): Promise<void> }, request: T): void {
  requests.write(request).catch(() => {});
}

type AdsClient = ReturnType<typeof createClient<typeof AggregatedDiscoveryService>>;

/** One SotW stream until it ends or fails. */
async function sotw(options: WildcardOptions, client: AdsClient, signal: AbortSignal): Promise<void> {
  const { type } = options;
  const held = new Held(type, options.bootstrap);
  const requests = createWritableIterable<MessageInitShape<typeof DiscoveryRequestSchema>>();
  const responses = client.streamAggregatedResources(requests, { signal });
  send(requests, { node: nodeOf(options.bootstrap), typeUrl: type.typeUrl, resourceNames: ["*"] });
  let accepted = "";
  for await (const response of responses) {
    if (response.typeUrl !== type.typeUrl) continue;
    const taken = response.resources.map((any, i) => held.take(any, response.versionInfo, `[${i}]`));
    const resources = taken.flatMap((t) => t.changed ?? []);
    const listed = new Set(taken.map((t) => t.name));
    // A full-state response (LDS, CDS) lists every resource: those it leaves out are removed.
    const removed = type.allResourcesRequiredInSotW ? held.remove(held.names().filter((n) => !listed.has(n))) : [];
    const error = nackDetail(resources);
    if (!error) accepted = response.versionInfo;
    options.onUpdate({ version: response.versionInfo, resources, removed, names: held.names() });
    send(requests, {
      typeUrl: type.typeUrl,
      resourceNames: ["*"],
      versionInfo: accepted,
      responseNonce: response.nonce,
      ...(error ? { errorDetail: error } : {}),
    });
  }
}

/** One delta stream until it ends or fails. */
async function delta(options: WildcardOptions, client: AdsClient, signal: AbortSignal): Promise<void> {
  const { type } = options;
  const held = new Held(type, options.bootstrap);
  const requests = createWritableIterable<MessageInitShape<typeof DeltaDiscoveryRequestSchema>>();
  const responses = client.deltaAggregatedResources(requests, { signal });
  send(requests, { node: nodeOf(options.bootstrap), typeUrl: type.typeUrl, resourceNamesSubscribe: ["*"] });
  for await (const response of responses) {
    if (response.typeUrl !== type.typeUrl) continue;
    const resources = response.resources.flatMap((resource, i) =>
      resource.resource
        ? (held.take(resource.resource, resource.version, resource.name || `[${i}]`).changed ?? [])
        : [],
    );
    const removed = held.remove(response.removedResources);
    const error = nackDetail(resources);
    options.onUpdate({ version: response.systemVersionInfo, resources, removed, names: held.names() });
    send(requests, { typeUrl: type.typeUrl, responseNonce: response.nonce, ...(error ? { errorDetail: error } : {}) });
  }
}

/**
 * Runs the wildcard subscription on the bootstrap's first server until `signal` aborts. A stream that ends (or
 * fails) after a response is opened again at once; one that ends before any response, after a backoff (1 s,
 * doubling to 30 s), as gRPC's xDS clients do. Each failure is reported; one with a permanent status
 * (UNIMPLEMENTED, PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT) ends it: it rejects with that error.
 */
export async function runWildcard(options: WildcardOptions): Promise<void> {
  const server = options.bootstrap.xdsServers[0];
  if (!server) throw new Error("the bootstrap names no xDS server");
  const useDelta = options.delta ?? server.apiType === "DELTA_GRPC";
  let backoffMs = FIRST_BACKOFF_MS;
  while (!options.signal.aborted) {
    const streamAbort = new AbortController();
    const stop = () => streamAbort.abort();
    options.signal.addEventListener("abort", stop, { once: true });
    let answered = false;
    const run = {
      ...options,
      onUpdate: (update: WildcardUpdate) => {
        answered = true;
        options.onUpdate(update);
      },
    };
    try {
      const client = createClient(AggregatedDiscoveryService, await transportFor(server));
      await (useDelta ? delta : sotw)(run, client, streamAbort.signal);
    } catch (error) {
      if (!options.signal.aborted) {
        options.onError(error as Error);
        if (permanentStatus(error) !== undefined) throw error;
      }
    } finally {
      options.signal.removeEventListener("abort", stop);
      streamAbort.abort();
    }
    if (answered) backoffMs = FIRST_BACKOFF_MS;
    else {
      await sleep(backoffMs, options.signal);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }
  }
}
