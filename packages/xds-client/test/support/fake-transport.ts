// An in-memory ADS server for fine-grained state-machine tests (timers, backoff, exact requests), speaking both
// protocols: state of the world and delta. Tests talk to it in protocol-neutral terms (`respond` with resources,
// removals and errors; requests read as `RequestView`s), so one test body runs against both. The protocol flows are
// also tested over real HTTP/2 against @xdskit/control-plane.

import type { MessageInitShape } from "@bufbuild/protobuf";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import {
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryRequest,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  type Resource,
  type ResourceErrorSchema,
  type ResourceNameSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { DeltaResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import { SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import type { XdsStream, XdsTransport, XdsTransportFactory } from "../../src/index.js";
import { readDeltaResponse, readSotwResponse } from "../../src/transport/response-reader.js";

export type Protocol = "sotw" | "delta";

/** The `api_type` of a bootstrap server for a protocol. */
export function apiTypeOf(protocol: Protocol): "GRPC" | "DELTA_GRPC" {
  return protocol === "sotw" ? "GRPC" : "DELTA_GRPC";
}

/** A response in protocol-neutral terms; each protocol reads the fields it has. */
export interface FakeResponse {
  readonly typeUrl: string;
  /** SotW `version_info`; delta `system_version_info` and each resource's `version` (unless a wrapper sets one). */
  readonly versionInfo?: string;
  readonly nonce?: string;
  /** Resources, plain or wrapped in `envoy.service.discovery.v3.Resource`; delta wraps plain ones itself. */
  readonly resources?: Any[];
  /**
   * The resources as bytes, in place of `resources`: SotW, each should encode an Any; delta, a Resource (neither need).
   * Not for a transport that hands decoded responses.
   */
  readonly resourceBytes?: Uint8Array[];
  readonly resourceErrors?: MessageInitShape<typeof ResourceErrorSchema>[];
  /** Delta only: `removed_resources`. */
  readonly removed?: string[];
  /** Delta only: `removed_resource_names`. */
  readonly removedNames?: MessageInitShape<typeof ResourceNameSchema>[];
}

/** A request as the tests assert it, whichever protocol sent it. */
export interface RequestView {
  readonly protocol: Protocol;
  readonly typeUrl: string;
  readonly nonce: string;
  /** SotW `version_info`; always "" for delta (it has none). */
  readonly version: string;
  readonly node: boolean;
  readonly nack: boolean;
  readonly errorDetail: { readonly code: number; readonly message: string } | undefined;
  /** Every name the client is subscribed to for this type after this request (plain names and locators), sorted. */
  readonly names: string[];
  /** Locators as `name{k=v,...}` (the client's subscription set for this type after this request), sorted. */
  readonly locators: string[];
  /** Names and locators (as above) this request added to and removed from the previous request's set. */
  readonly added: string[];
  readonly removed: string[];
  /** Delta `initial_resource_versions`. */
  readonly initialVersions: Readonly<Record<string, string>>;
  readonly raw: DiscoveryRequest | DeltaDiscoveryRequest;
}

export interface FakeStream {
  readonly id: number;
  readonly server: string;
  readonly protocol: Protocol;
  readonly requests: RequestView[];
  respond(response: FakeResponse): void;
  /** Responds, then resolves with the client's answer to it (its ACK or NACK). */
  exchange(response: FakeResponse): Promise<RequestView>;
  /** Fails the stream with a gRPC status code (as a ConnectError-like object). */
  fail(code: number, message?: string): void;
  /** Ends the stream with OK. */
  end(): void;
  /** Marks the stream established on its HTTP/2 connection (see `holdEstablishment`). */
  establish(): void;
  readonly established: boolean;
  readonly cancelled: boolean;
  /** Resolves with the next request not yet taken. */
  nextRequest(): Promise<RequestView>;
}

export interface FakeServer {
  readonly transportFactory: XdsTransportFactory;
  readonly streams: FakeStream[];
  /** Resolves with the next stream opened (or the oldest already open one not yet taken). */
  nextStream(): Promise<FakeStream>;
  latest(): FakeStream;
  /** New streams stay unestablished (a server that accepted the connection and never speaks) until `establish()`. */
  holdEstablishment(hold: boolean): void;
}

export interface FakeServerOptions {
  /** SotW responses as decoded DiscoveryResponses (a custom transport's choice) instead of SotwResponseBytes. */
  readonly decodedSotw?: boolean;
  /** Delta responses as decoded DeltaDiscoveryResponses (a custom transport's choice) instead of DeltaResponseBytes. */
  readonly decodedDelta?: boolean;
}

const LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
const CLA = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const WRAPPER = "type.googleapis.com/envoy.service.discovery.v3.Resource";

/** The name inside a test resource (a Listener or ClusterLoadAssignment), or "" when it cannot be read. */
function nameInside(any: Any): string {
  try {
    if (any.typeUrl === LISTENER) return fromBinary(ListenerSchema, any.value).name;
    if (any.typeUrl === CLA) return fromBinary(ClusterLoadAssignmentSchema, any.value).clusterName;
  } catch {
    // An unparseable resource has no name.
  }
  return "";
}

function deltaResource(any: Any, version: string): Resource {
  if (any.typeUrl === WRAPPER) {
    try {
      const wrapper = fromBinary(ResourceSchema, any.value);
      if (wrapper.version === "") wrapper.version = version;
      return wrapper;
    } catch {
      // Not a Resource: send it as the payload of one, for the client to reject.
    }
  }
  return create(ResourceSchema, { name: nameInside(any), version, resource: any });
}

function locatorText(name: string, parameters: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(parameters)
    .sort()
    .map((k) => `${k}=${parameters[k]}`);
  return `${name}{${pairs.join(",")}}`;
}

/** Reads requests of either protocol into views; keeps each type's subscription set (delta requests are diffs). */
function requestReader(protocol: Protocol) {
  // Per type: plain names as themselves, locators as `name{k=v,...}`.
  const subscriptions = new Map<string, Set<string>>();
  return (raw: DiscoveryRequest | DeltaDiscoveryRequest): RequestView => {
    const typeUrl = raw.typeUrl;
    const before = subscriptions.get(typeUrl) ?? new Set<string>();
    let after: Set<string>;
    let version = "";
    let initialVersions: Record<string, string> = {};
    if (raw.$typeName === "envoy.service.discovery.v3.DiscoveryRequest") {
      version = raw.versionInfo;
      after = new Set([
        ...raw.resourceNames,
        ...raw.resourceLocators.map((l) => locatorText(l.name, l.dynamicParameters)),
      ]);
    } else {
      initialVersions = { ...raw.initialResourceVersions };
      after = new Set(before);
      for (const n of raw.resourceNamesSubscribe) after.add(n);
      for (const l of raw.resourceLocatorsSubscribe) after.add(locatorText(l.name, l.dynamicParameters));
      for (const n of raw.resourceNamesUnsubscribe) after.delete(n);
      for (const l of raw.resourceLocatorsUnsubscribe) after.delete(locatorText(l.name, l.dynamicParameters));
    }
    subscriptions.set(typeUrl, after);
    const error = raw.errorDetail;
    const all = [...after];
    return {
      protocol,
      typeUrl,
      nonce: raw.responseNonce,
      version,
      node: raw.node !== undefined,
      nack: error !== undefined,
      errorDetail: error === undefined ? undefined : { code: error.code, message: error.message },
      names: [...new Set(all.map((x) => (x.endsWith("}") ? x.slice(0, x.lastIndexOf("{")) : x)))].sort(),
      locators: all.filter((x) => x.endsWith("}")).sort(),
      added: all.filter((x) => !before.has(x)).sort(),
      removed: [...before].filter((x) => !after.has(x)).sort(),
      initialVersions,
      raw,
    };
  };
}

export function createFakeServer({ decodedSotw = false, decodedDelta = false }: FakeServerOptions = {}): FakeServer {
  const streams: FakeStream[] = [];
  let taken = 0;
  const streamWaiters: ((s: FakeStream) => void)[] = [];
  let seq = 0;
  let holdEstablishment = false;

  function openStream<Req extends DiscoveryRequest | DeltaDiscoveryRequest, Res>(
    server: string,
    kind: Protocol,
  ): XdsStream<Req, Res> {
    const requests: RequestView[] = [];
    const read = requestReader(kind);
    let requestsTaken = 0;
    const requestWaiters: ((r: RequestView) => void)[] = [];
    const inbox: ({ value: Res } | { error: unknown } | { done: true })[] = [];
    const readers: ((r: IteratorResult<Res>) => void)[] = [];
    const rejecters: ((e: unknown) => void)[] = [];
    let finished = false;
    let cancelled = false;
    let markEstablished: () => void = () => {};
    let isEstablished = false;
    const established = new Promise<void>((resolve) => {
      markEstablished = () => {
        isEstablished = true;
        resolve();
      };
    });
    if (!holdEstablishment) markEstablished();
    const pump = () => {
      while (readers.length > 0 && inbox.length > 0) {
        const item = inbox.shift()!;
        const resolve = readers.shift()!;
        const reject = rejecters.shift()!;
        if ("value" in item) resolve({ value: item.value, done: false });
        else if ("error" in item) reject(item.error);
        else resolve({ value: undefined, done: true });
      }
    };
    const push = (item: (typeof inbox)[number]) => {
      if (finished) return;
      if (!("value" in item)) finished = true;
      inbox.push(item);
      pump();
    };
    const encode = (r: FakeResponse): Res => {
      if (kind === "sotw") {
        // As the default transport reads them (decodedSotw: as a transport that hands decoded Anys does).
        const fields = {
          typeUrl: r.typeUrl,
          versionInfo: r.versionInfo ?? "",
          nonce: r.nonce ?? "",
          resourceErrors: r.resourceErrors ?? [],
        };
        if (decodedSotw) {
          return create(DiscoveryResponseSchema, {
            ...fields,
            resources: r.resources ?? [],
          }) as DiscoveryResponse as Res;
        }
        const resources = r.resourceBytes ?? (r.resources ?? []).map((any) => toBinary(AnySchema, any));
        // Encoded and read back by the default transport's reader: resources as ranges of the message.
        const message = create(SotwResponseBytesSchema, { ...fields, resources });
        return readSotwResponse(toBinary(SotwResponseBytesSchema, message)) as Res;
      }
      // As the default transport reads them (decodedDelta: as a transport that hands decoded Resources does).
      const version = r.versionInfo ?? "";
      const fields = {
        typeUrl: r.typeUrl,
        systemVersionInfo: version,
        nonce: r.nonce ?? "",
        removedResources: r.removed ?? [],
        removedResourceNames: r.removedNames ?? [],
        resourceErrors: r.resourceErrors ?? [],
      };
      const resources = (r.resources ?? []).map((any) => deltaResource(any, version));
      if (decodedDelta)
        return create(DeltaDiscoveryResponseSchema, { ...fields, resources }) as DeltaDiscoveryResponse as Res;
      const bytes = r.resourceBytes ?? resources.map((resource) => toBinary(ResourceSchema, resource));
      // Encoded and read back by the default transport's reader: ranges of the message when plain.
      const message = create(DeltaResponseBytesSchema, { ...fields, resources: bytes });
      return readDeltaResponse(toBinary(DeltaResponseBytesSchema, message)) as Res;
    };
    const fake: FakeStream = {
      id: ++seq,
      server,
      protocol: kind,
      requests,
      respond: (response) => push({ value: encode(response) }),
      exchange(response) {
        fake.respond(response);
        return fake.nextRequest();
      },
      fail: (code, message = "stream failed") =>
        push({ error: Object.assign(new Error(message), { code, rawMessage: message }) }),
      end: () => push({ done: true }),
      establish: () => markEstablished(),
      get established() {
        return isEstablished;
      },
      get cancelled() {
        return cancelled;
      },
      nextRequest() {
        if (requestsTaken < requests.length) return Promise.resolve(requests[requestsTaken++]!);
        return new Promise((resolve) => requestWaiters.push(resolve));
      },
    };
    streams.push(fake);
    const waiter = streamWaiters.shift();
    if (waiter) {
      taken += 1;
      waiter(fake);
    }
    return {
      async send(request) {
        if (finished || cancelled) throw new Error("stream ended");
        const view = read(request);
        requests.push(view);
        const w = requestWaiters.shift();
        if (w) {
          requestsTaken += 1;
          w(view);
        }
      },
      established,
      responses: {
        next: () =>
          new Promise((resolve, reject) => {
            readers.push(resolve);
            rejecters.push(reject);
            pump();
          }),
      },
      cancel() {
        cancelled = true;
        if (!finished) push({ done: true });
      },
    };
  }

  const transportFactory: XdsTransportFactory = (server) => {
    const transport: XdsTransport = {
      streamAggregatedResources: () => openStream(server.serverUri, "sotw"),
      deltaAggregatedResources: () => openStream(server.serverUri, "delta"),
      close: () => {},
    };
    return transport;
  };

  return {
    transportFactory,
    streams,
    nextStream() {
      if (taken < streams.length) return Promise.resolve(streams[taken++]!);
      return new Promise((resolve) => streamWaiters.push(resolve));
    },
    latest: () => streams[streams.length - 1]!,
    holdEstablishment(hold) {
      holdEstablishment = hold;
    },
  };
}

export function resourceError(
  name: string,
  code: number,
  message: string,
): MessageInitShape<typeof ResourceErrorSchema> {
  return { resourceName: { name }, errorDetail: { code, message } };
}
