import { create } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ControlPlane, Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import type { HookEventInit, HooksImpl, InjectedResponse, StreamCloseReason, StreamKind } from "./hooks.js";
import type { ScopedLogger } from "./logger.js";
import { PushQueue } from "./push-queue.js";
import type { ResourceEntry, ResourceSetImpl } from "./resource-set.js";
import type { ResourceStore } from "./resource-store.js";
import { PUSH_ORDER } from "./type-urls.js";

/** What the server gives each stream. */
export interface StreamHost {
  readonly store: ResourceStore;
  readonly hooks: HooksImpl;
  readonly logger: ScopedLogger;
  readonly fullStateTypeUrls: ReadonlySet<string>;
  readonly wrapResources: boolean;
  readonly controlPlane: ControlPlane | undefined;
  register(stream: StreamBase<unknown, unknown>): void;
  unregister(stream: StreamBase<unknown, unknown>): void;
}

/** A snapshot of one type on one stream, for tests and debugging. */
export interface StreamTypeInfo {
  readonly typeUrl: string;
  readonly wildcard: boolean;
  /** Names subscribed by name (a wildcard stream may list some too). */
  readonly resourceNames: readonly string[];
  /** Nonce of the latest response of this type ("" if none). */
  readonly lastNonce: string;
  /** Version of the latest response ("" if none). */
  readonly lastVersion: string;
  /** Version the client last ACKed (SotW), or nonce it last ACKed (delta). */
  readonly ackedVersion: string;
  /** The `error_detail` of the latest NACK, until the next ACK. */
  readonly nack: Status | undefined;
  /** name -> version the server believes the client holds. */
  readonly sentVersions: ReadonlyMap<string, string>;
}

export interface StreamInfo {
  readonly id: number;
  readonly kind: StreamKind;
  readonly peer: string | undefined;
  readonly node: Node | undefined;
  readonly types: readonly StreamTypeInfo[];
}

/** A request the server refuses: the stream ends with INVALID_ARGUMENT. */
export class InvalidRequestError extends Error {
  override readonly name = "InvalidRequestError";
}

interface HeldResponse<Res> {
  readonly typeUrl: string;
  readonly response: Res;
  readonly event: HookEventInit;
}

const wrappedAnys = new WeakMap<ResourceEntry, Any>();
const deltaResources = new WeakMap<ResourceEntry, Resource>();
function pushRank(typeUrl: string): number {
  const index = PUSH_ORDER.indexOf(typeUrl);
  return index < 0 ? PUSH_ORDER.length : index;
}

/**
 * One ADS stream: requests are handled synchronously as they arrive, responses go through a queue the handler
 * drains. Changes to the stream's resource set mark types dirty; dirty types are flushed in one microtask.
 */
/** The per-type bookkeeping both protocols keep, as `streams()` shows it. */
export interface TypeStateView {
  readonly sub: { readonly typeUrl: string; readonly wildcard: boolean; readonly names: Iterable<string> };
  readonly lastNonce: string;
  readonly lastVersion: string;
  readonly nack: Status | undefined;
}

export function typeInfo(
  state: TypeStateView,
  ackedVersion: string,
  sentVersions: ReadonlyMap<string, string>,
): StreamTypeInfo {
  return {
    typeUrl: state.sub.typeUrl,
    wildcard: state.sub.wildcard,
    resourceNames: [...state.sub.names],
    lastNonce: state.lastNonce,
    lastVersion: state.lastVersion,
    ackedVersion,
    nack: state.nack,
    sentVersions,
  };
}

export abstract class StreamBase<Req, Res> {
  readonly id: number;
  readonly kind: StreamKind;
  readonly peer: string | undefined;
  node: Node | undefined;
  set: ResourceSetImpl;
  protected readonly host: StreamHost;
  protected readonly logger: ScopedLogger;
  readonly #queue = new PushQueue<Res>();
  #held: HeldResponse<Res>[] = [];
  #closed = false;
  readonly #dirty = new Set<string>();
  #flushScheduled = false;
  #nonce = 0;

  constructor(host: StreamHost, id: number, kind: StreamKind, peer: string | undefined, logger: ScopedLogger) {
    this.host = host;
    this.id = id;
    this.kind = kind;
    this.peer = peer;
    this.logger = logger;
    this.set = host.store.defaultSet;
  }

  get closed(): boolean {
    return this.#closed;
  }

  protected abstract handleRequest(request: Req): void;
  /** Builds an injected response (nonce assigned if missing), records its nonce, and delivers it. */
  abstract inject(response: InjectedResponse): string;
  /** Sends what the client of this type is missing, if anything. */
  protected abstract flushType(typeUrl: string): void;
  abstract requestedTypes(): Iterable<string>;
  /** What `streams()` shows of each type this stream knows. */
  protected abstract typeInfos(): StreamTypeInfo[];

  info(): StreamInfo {
    return { id: this.id, kind: this.kind, peer: this.peer, node: this.node, types: this.typeInfos() };
  }

  /** The handler's response iterable. */
  async *serve(requests: AsyncIterable<Req>, signal: AbortSignal): AsyncGenerator<Res, void, undefined> {
    this.host.register(this as StreamBase<unknown, unknown>);
    this.host.hooks.emit({ type: "stream-open", streamId: this.id, kind: this.kind, peer: this.peer });
    const onAbort = (): void => this.end(undefined, "cancelled", "client cancelled the stream");
    signal.addEventListener("abort", onAbort, { once: true });
    void this.#readLoop(requests, signal);
    try {
      yield* this.#queue;
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.end(undefined, "cancelled", "response stream closed");
    }
  }

  /**
   * Ends the stream: with `code` undefined the client is gone (queued responses are dropped), 0 ends it with OK
   * after the queued responses, any other code ends it at once with that status.
   */
  end(code: number | undefined, reason: StreamCloseReason, message: string): void {
    if (this.#closed) return;
    this.#closed = true;
    if (code === undefined) this.#queue.abort();
    else if (code === 0) this.#queue.end();
    else this.#queue.abort(new ConnectError(message, code as Code));
    this.#held = [];
    this.host.unregister(this as StreamBase<unknown, unknown>);
    this.logger.debug(`closed (${reason}): ${message}`);
    this.host.hooks.emit({
      type: "stream-close",
      streamId: this.id,
      kind: this.kind,
      node: this.node,
      reason,
      code,
      message,
    });
  }

  /** Marks types changed in the stream's set; they are flushed together in a microtask. */
  markDirty(typeUrls: Iterable<string>): void {
    if (this.#closed) return;
    for (const typeUrl of typeUrls) this.#dirty.add(typeUrl);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    queueMicrotask(() => this.#flushDirty());
  }

  /** Re-resolves the stream's resource set from its node (the node scopes changed, or the node became known). */
  rebind(): void {
    const set = this.host.store.resolve(this.node);
    if (set === this.set) return;
    this.set = set;
    this.markDirty(this.requestedTypes());
  }

  /** Writes held responses that no hold covers any more, keeping each type's order. */
  releaseHeld(): void {
    const keep: HeldResponse<Res>[] = [];
    for (const held of this.#held) {
      if (keep.some((k) => k.typeUrl === held.typeUrl) || this.host.hooks.isHeld(this.id, held.typeUrl)) {
        keep.push(held);
        continue;
      }
      this.#queue.push(held.response);
      this.host.hooks.emit({ ...held.event, delivery: "sent" } as HookEventInit);
    }
    this.#held = keep;
  }

  protected nextNonce(): string {
    return String(++this.#nonce);
  }

  /** The Any to put in a SotW response: the packed message, or it wrapped in `Resource`. */
  protected anyFor(entry: ResourceEntry): Any {
    if (!(entry.wrap ?? this.host.wrapResources)) return entry.any;
    let wrapped = wrappedAnys.get(entry);
    if (!wrapped) {
      wrapped = anyPack(ResourceSchema, this.resourceFor(entry));
      wrappedAnys.set(entry, wrapped);
    }
    return wrapped;
  }

  protected resourceFor(entry: ResourceEntry): Resource {
    let resource = deltaResources.get(entry);
    if (!resource) {
      resource = create(ResourceSchema, { name: entry.name, version: String(entry.version), resource: entry.any });
      deltaResources.set(entry, resource);
    }
    return resource;
  }

  /** Hands a built response (`wire`: its form for the wire) to the hooks (send, hold or drop) and reports it. */
  protected deliver(typeUrl: string, wire: Res, event: HookEventInit): void {
    let delivery = this.host.hooks.route(this.id, typeUrl);
    if (delivery === "sent" && this.#held.some((h) => h.typeUrl === typeUrl)) delivery = "held";
    if (delivery === "sent") this.#queue.push(wire);
    else if (delivery === "held") this.#held.push({ typeUrl, response: wire, event });
    this.host.hooks.emit({ ...event, delivery } as HookEventInit);
  }

  /** The node arrived (first request): pick the resource set for it. */
  protected adoptNode(node: Node | undefined): void {
    if (this.node !== undefined || node === undefined) return;
    this.node = node;
    this.set = this.host.store.resolve(node);
  }

  #flushDirty(): void {
    this.#flushScheduled = false;
    if (this.#closed) return;
    const types = [...this.#dirty].sort((a, b) => pushRank(a) - pushRank(b));
    this.#dirty.clear();
    for (const typeUrl of types) {
      if (this.#closed) return;
      this.#guard(() => this.flushType(typeUrl));
    }
  }

  #guard(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      if (error instanceof InvalidRequestError) {
        this.logger.warn(`invalid request: ${error.message}`);
        this.end(Code.InvalidArgument, "invalid-request", error.message);
      } else {
        this.logger.error("internal error", error);
        this.end(Code.Internal, "internal-error", "internal error in the management server");
      }
    }
  }

  async #readLoop(requests: AsyncIterable<Req>, signal: AbortSignal): Promise<void> {
    try {
      for await (const request of requests) {
        if (this.#closed) return;
        this.#guard(() => this.handleRequest(request));
        if (this.#closed) return;
      }
      // A cancelled client also ends the request iterable; the abort signal tells the two apart, a moment later.
      if (!signal.aborted) await new Promise((resolve) => setImmediate(resolve));
      if (signal.aborted) this.end(undefined, "cancelled", "client cancelled the stream");
      else this.end(0, "client-closed", "the client closed its side of the stream");
    } catch (error) {
      if (this.#closed) return;
      const connectError = ConnectError.from(error);
      if (signal.aborted || connectError.code === Code.Canceled || connectError.code === Code.Aborted) {
        this.end(undefined, "cancelled", connectError.rawMessage);
        return;
      }
      if (connectError.code === Code.ResourceExhausted) {
        this.logger.warn(`request too large: ${connectError.rawMessage}`);
        this.end(Code.ResourceExhausted, "invalid-request", connectError.rawMessage);
        return;
      }
      this.logger.warn(`unreadable request: ${connectError.rawMessage}`);
      this.end(Code.InvalidArgument, "invalid-request", `unreadable request: ${connectError.rawMessage}`);
    }
  }
}
