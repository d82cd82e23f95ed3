import { create, fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { ControlPlane, Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponse,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import { EMPTY_HELD, type HeldState, heldVersion } from "../held/held-state.js";
import type { PlanCache, PlanInit } from "../held/response-plan.js";
import type { ResponseDelivery, ResponseEventInit, StreamCloseReason, StreamKind } from "../hooks/hook-events.js";
import type { HooksImpl, InjectedResponse } from "../hooks/hooks.js";
import { checkNode, InvalidRequestError, type ServerLimits, undecodable } from "../limits.js";
import type { ScopedLogger } from "../logger.js";
import type { ServedGroup, ServedResolver, ServedResources } from "../resources/served.js";
import { StreamRefusedError } from "../security/authorization.js";
import { authorizedEntries, type ReadAccess, type StreamIdentity } from "../security/authorization-read.js";
import type { PeerIdentity } from "../security/identity.js";
import { checkSameNode } from "../security/node-binding.js";
import { type ChangedVariants, concerns } from "../subscriptions/change-scope.js";
import { nameOfPlainKey, type Slot, subscriptionLabel, TypeSubscription } from "../subscriptions/subscription.js";
import { DPDS_TYPE_URL, PUSH_ORDER } from "../type-urls.js";
import { type WireMessage, wholeMessage, withNonce } from "./encoded-response.js";
import type { FlushBatch } from "./flush-batch.js";
import type { GrpcServerCall } from "./grpc-call.js";
import type { PreparedResponse, ResponseParts } from "./prepared-response.js";
import type { StreamInfo, StreamTypeInfo } from "./stream-info.js";

/** What the server gives each stream. */
export interface StreamHost {
  /** Which resources a node's streams are served from. */
  readonly resolver: ServedResolver;
  readonly hooks: HooksImpl;
  readonly logger: ScopedLogger;
  readonly fullStateTypeUrls: ReadonlySet<string>;
  readonly wrapResources: boolean;
  readonly controlPlane: ControlPlane | undefined;
  readonly limits: ServerLimits;
  /** One per protocol: what a client holds means different things in each. */
  readonly plans: Readonly<Record<StreamKind, PlanCache>>;
  /** Where streams queue their flushes: the streams a change marks dirty flush in one microtask. */
  readonly flushes: FlushBatch;
  register(stream: AdsStream): void;
  unregister(stream: AdsStream): void;
  /** What a stream subscribes to of a type, after any change to it: the changes that may concern it reach it. */
  subscribed(stream: AdsStream, sub: TypeSubscription): void;
  /** Refuses (throws StreamRefusedError) a peer that may not be served as `node`; runs once, at the first request. */
  admit(peer: PeerIdentity, node: Node | undefined): void;
  /** What an admitted stream may read; undefined: everything (no read policy). */
  readAccess(identity: StreamIdentity): ReadAccess | undefined;
}

/** What the server and its hooks see of a stream, whichever its protocol. */
export interface AdsStream {
  readonly id: number;
  /** The node of its first request, once known. */
  readonly node: Node | undefined;
  /** Whether the stream serves any type from this set. */
  uses(set: ServedResources): boolean;
  info(): StreamInfo;
  inject(response: InjectedResponse): string;
  /** `variants`: what changed, so that a type whose subscriptions it cannot concern is left alone (change-scope.ts). */
  markDirty(typeUrls: Iterable<string>, variants?: ChangedVariants): void;
  /** Every type the stream uses: what it is served may have changed (the read policy did). */
  markAllDirty(): void;
  rebind(): void;
  releaseHeld(): void;
  end(code: number | undefined, reason: StreamCloseReason, message: string): void;
}

/** A response built for one stream: its bytes and the events that report it. */
export interface Outgoing {
  readonly typeUrl: string;
  readonly nonce: string;
  readonly versionInfo: string;
  readonly resourceCount: number;
  readonly wire: WireMessage;
  /** The hook event of one delivery; its `response` message is built when read (most servers have no listener). */
  event(delivery: ResponseDelivery): ResponseEventInit;
}

/** What both protocols keep per type. */
export interface TypeState {
  readonly sub: TypeSubscription;
  /** What the server believes the client holds: shared with every stream that got the same responses. */
  holds: HeldState;
  lastNonce: string;
  lastVersion: string;
  nack: Status | undefined;
  /** A change arrived that may not have been sent: flushed when the flow allows. */
  pending: boolean;
  /** The latest response awaits the client's ACK or NACK. */
  unacked: boolean;
  /** Responses of this type written that the connection has not taken yet. */
  unflushed: number;
  /** A response held back by `hooks.hold()`. */
  withheld: Outgoing | undefined;
}

export function emptyTypeState(typeUrl: string): TypeState {
  return {
    sub: new TypeSubscription(typeUrl),
    holds: EMPTY_HELD,
    lastNonce: "",
    lastVersion: "",
    nack: undefined,
    pending: false,
    unacked: false,
    unflushed: 0,
    withheld: undefined,
  };
}

function pushRank(typeUrl: string): number {
  const index = PUSH_ORDER.indexOf(typeUrl);
  return index < 0 ? PUSH_ORDER.length : index;
}

/**
 * One ADS stream, whichever the protocol: requests are handled synchronously as they arrive; changes to the stream's
 * resource set mark types pending, flushed together in one microtask. Flow control, per type: a response waits for
 * the client's ACK or NACK and for the connection to take it before the next one of its type is built, and changes
 * meanwhile coalesce into that next one (the newest state, once). A stream thus holds at most one response per type,
 * whatever its client does; one that would queue more than `maxQueuedBytesPerStream` is ended.
 */
export abstract class StreamBase<Req, Res extends DiscoveryResponse | DeltaDiscoveryResponse, State extends TypeState>
  implements AdsStream
{
  readonly id: number;
  readonly kind: StreamKind;
  node: Node | undefined;
  /** The set the stream's node resolves to. */
  set: ServedResources;
  /** The DPDS resource set for the node by `setDynamicParameters`, which wins over `set` for that type. */
  dynamicParameters: ServedResources | undefined;
  readonly peer: PeerIdentity;
  protected readonly host: StreamHost;
  protected readonly logger: ScopedLogger;
  protected readonly types = new Map<string, State>();
  readonly #call: GrpcServerCall;
  #closed = false;
  #flushScheduled = false;
  #nonce = 0;
  /** The first request was admitted: the node is fixed. */
  #admitted = false;
  /** What the stream may read, once admitted, under a read policy. */
  #access: ReadAccess | undefined;

  constructor(
    host: StreamHost,
    id: number,
    kind: StreamKind,
    call: GrpcServerCall,
    logger: ScopedLogger,
    peer: PeerIdentity,
  ) {
    this.host = host;
    this.id = id;
    this.kind = kind;
    this.peer = peer;
    this.#call = call;
    this.logger = logger;
    this.set = host.resolver.defaultSet;
  }

  uses(set: ServedResources): boolean {
    return this.set === set || this.dynamicParameters === set;
  }

  /** The set a type is served from. */
  protected setOf(typeUrl: string): ServedResources {
    return typeUrl === DPDS_TYPE_URL ? (this.dynamicParameters ?? this.set) : this.set;
  }

  /** The protocol's request and response messages. */
  protected abstract readonly schemas: {
    readonly request: typeof DiscoveryRequestSchema | typeof DeltaDiscoveryRequestSchema;
    readonly response: typeof DiscoveryResponseSchema | typeof DeltaDiscoveryResponseSchema;
  };
  protected abstract handleRequest(request: Req): void;
  protected abstract newState(typeUrl: string): State;
  /**
   * What a client holding `holds` of a type gets next: the same for every stream in the same place, so it runs once
   * for all of them (see response-plan.ts). `versionInfo` is the type's version in the stream's set; `changedNames`,
   * when known, every name changed since a version `holds` was settled at (see held-diff.ts).
   */
  protected abstract planResponse(
    holds: HeldState,
    sub: TypeSubscription,
    entries: ReadonlyMap<string, ServedGroup> | undefined,
    versionInfo: string,
    changedNames: readonly string[] | undefined,
  ): PlanInit<PreparedResponse>;
  /** Whether a planned response goes out: when it carries something (a protocol may add cases). */
  protected isDue(_state: State, send: boolean): boolean {
    return send;
  }
  /** What the hooks report of an injected response, in this protocol's fields. */
  protected abstract injectedParts(message: Res): Pick<ResponseParts, "versionInfo" | "resourceNames" | "removedNames">;
  protected abstract typeInfo(state: State): Omit<StreamTypeInfo, "waitingFor" | "pending">;

  info(): StreamInfo {
    return {
      id: this.id,
      kind: this.kind,
      peer: this.#call.peer,
      node: this.node,
      queuedBytes: this.#call.queuedBytes,
      types: [...this.types.values()].map((state) => ({
        ...this.typeInfo(state),
        waitingFor: state.withheld ? "release" : state.unflushed > 0 ? "write" : state.unacked ? "ack" : undefined,
        pending: state.pending,
      })),
    };
  }

  /** Starts serving the call: registers the stream and reads its requests. */
  serve(): void {
    this.host.register(this);
    this.host.hooks.emit({ type: "stream-open", streamId: this.id, kind: this.kind, peer: this.#call.peer });
    this.#call.start({
      message: (bytes) => this.#guard(() => this.handleRequest(this.#decode(bytes))),
      halfClose: () => this.end(0, "client-closed", "the client closed its side of the stream"),
      cancel: () => this.end(undefined, "cancelled", "the client went away"),
      refuse: (code, message) => {
        this.logger.warn(`refused request: ${message}`);
        this.end(code, "invalid-request", message);
      },
      deadlineExceeded: (message) => this.end(Code.DeadlineExceeded, "deadline-exceeded", message),
    });
  }

  /**
   * Ends the stream: with `code` undefined the client is gone (or its connection is cut: the stream is reset), 0
   * ends it with OK after what was written, any other code with that status.
   */
  end(code: number | undefined, reason: StreamCloseReason, message: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#call.end(code, message, reason === "queue-full");
    this.host.unregister(this);
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

  markAllDirty(): void {
    this.markDirty(this.types.keys());
  }

  /**
   * Marks types changed in the stream's set; they are flushed together in a microtask. With `variants`, a type none
   * of whose subscriptions a changed variant concerns is not (what it is due cannot have changed: change-scope.ts).
   */
  markDirty(typeUrls: Iterable<string>, variants?: ChangedVariants): void {
    if (this.#closed) return;
    let any = false;
    for (const typeUrl of typeUrls) {
      const state = this.types.get(typeUrl);
      if (!state || (variants !== undefined && !concerns(state.sub, variants))) continue;
      state.pending = true;
      any = true;
    }
    if (any) this.#scheduleFlush();
  }

  /** Re-resolves the stream's resource sets from its node (the node scopes changed, or the node became known). */
  rebind(): void {
    const set = this.host.resolver.resolve(this.node);
    const dynamicParameters = this.host.resolver.resolveDynamicParameters(this.node);
    if (set === this.set && dynamicParameters === this.dynamicParameters) return;
    this.set = set;
    this.dynamicParameters = dynamicParameters;
    this.markDirty(this.types.keys());
  }

  /** Writes held-back responses that no hold covers any more. */
  releaseHeld(): void {
    for (const state of this.types.values()) {
      const out = state.withheld;
      if (!out || this.host.hooks.isHeld(this.id, out.typeUrl)) continue;
      state.withheld = undefined;
      this.#write(state, out);
      if (this.#closed) return;
      this.host.hooks.emit(out.event("sent"));
    }
  }

  /** Writes a response of the test's own, bypassing flow control; its nonce becomes the type's latest. */
  inject(init: InjectedResponse): string {
    const schema = this.schemas.response;
    const message = create(schema, init as never) as Res;
    if (message.typeUrl === "") throw new TypeError("injectResponse: the response needs a type_url");
    if (message.nonce === "") message.nonce = this.nextNonce();
    const parts: ResponseParts = {
      ...this.injectedParts(message),
      typeUrl: message.typeUrl,
      errorNames: message.resourceErrors.map((e) => e.resourceName?.name ?? ""),
      message,
    };
    const state = this.types.get(message.typeUrl) ?? this.#addState(message.typeUrl);
    this.#deliver(state, this.outgoing(parts, message.nonce, wholeMessage(schema, message)));
    return message.nonce;
  }

  /** The state of a type (its URL checked by the caller), created on first use within maxTypesPerStream. */
  protected stateOf(typeUrl: string, what: string): State {
    const state = this.types.get(typeUrl);
    if (state) return state;
    if (this.types.size >= this.host.limits.maxTypesPerStream) {
      throw new InvalidRequestError(
        `${what} is for a type beyond maxTypesPerStream (${this.host.limits.maxTypesPerStream} types on one stream)`,
        Code.ResourceExhausted,
      );
    }
    return this.#addState(typeUrl);
  }

  /** The client ACKed or NACKed the latest response of the type: the next one may follow. */
  protected acknowledged(state: State): void {
    state.unacked = false;
  }

  /** Sends what the client of this type is missing, now if the flow allows, else when it does. */
  protected flushType(state: State): void {
    if (this.#closed) return;
    // Every request ends here, after any change to the subscription.
    this.host.subscribed(this, state.sub);
    if (state.withheld || state.unflushed > 0 || state.unacked) {
      state.pending = true;
      return;
    }
    state.pending = false;
    const typeUrl = state.sub.typeUrl;
    const set = this.setOf(typeUrl);
    const version = set.typeVersion(typeUrl);
    const entries = set.entries(typeUrl);
    // Under a read policy, what a stream sees depends on its identity's grants too: plans are shared within an
    // authorization class only.
    const access = this.#access;
    const slot = access ? state.sub.key + access.key : state.sub.key;
    const plan = this.host.plans[this.kind].plan(state.holds, slot, version, (settledAt) => {
      const changedNames = settledAt ? set.changedSince(typeUrl, Number(settledAt)) : undefined;
      const visible = access ? authorizedEntries(entries, state.sub, access) : entries;
      return this.planResponse(state.holds, state.sub, visible, version || "0", changedNames);
    });
    if (plan.waiting || !this.isDue(state, plan.send)) return;
    const nonce = this.nextNonce();
    // What the client holds once it has this response is worked out after the response is written (for the first
    // stream of a fan-out that is a pass over every resource, better done with the bytes on their way) and before
    // the hooks hear of it: nothing reads it in between.
    const settle = () => {
      state.holds = plan.next();
    };
    this.#deliver(state, this.outgoing(plan.content, nonce, withNonce(plan.content.body, nonce)), settle);
  }

  protected nextNonce(): string {
    return String(++this.#nonce);
  }

  /** A response for the wire and the hooks: `parts` with this stream's nonce. */
  protected outgoing(parts: ResponseParts, nonce: string, wire: WireMessage): Outgoing {
    const { kind, id: streamId, node } = this;
    let response: ResponseParts["message"] | undefined;
    const responseOf = () => {
      response ??= parts.message.nonce === nonce ? parts.message : { ...parts.message, nonce };
      return response;
    };
    return {
      typeUrl: parts.typeUrl,
      nonce,
      versionInfo: parts.versionInfo,
      resourceCount: parts.resourceNames.length,
      wire,
      event: (delivery) =>
        ({
          type: "response",
          kind,
          streamId,
          node,
          typeUrl: parts.typeUrl,
          nonce,
          versionInfo: parts.versionInfo,
          resourceNames: parts.resourceNames,
          errorNames: parts.errorNames,
          ...(kind === "delta" ? { removedNames: parts.removedNames } : {}),
          get response() {
            return responseOf();
          },
          delivery,
        }) as ResponseEventInit,
    };
  }

  /** What `streams()` shows of a type, in both protocols. */
  protected commonInfo(
    state: State,
    ackedVersion: string,
    showVersion: (version: number) => string | undefined,
  ): Omit<StreamTypeInfo, "waitingFor" | "pending"> {
    const sentVersions = new Map<string, string>();
    const sub = state.sub;
    const slots = [...sub.slots.values()];
    const hasParams = (slot: Slot): boolean => Object.keys(slot.params).length > 0;
    const label = (key: string): string => {
      const slot = sub.slots.get(key) ?? sub.coveredSlot(key);
      return slot ? subscriptionLabel(slot) : nameOfPlainKey(key);
    };
    for (const [key, held] of state.holds.resources) {
      const shown = showVersion(heldVersion(held));
      if (shown !== undefined) sentVersions.set(label(key), shown);
    }
    return {
      typeUrl: sub.typeUrl,
      wildcard: sub.wildcard,
      wildcardParameters: sub.wildcards.map((wildcard) => wildcard.params),
      resourceNames: slots.filter((slot) => !hasParams(slot)).map((slot) => slot.name),
      resourceLocators: slots.filter(hasParams).map((slot) => ({ name: slot.name, dynamicParameters: slot.params })),
      lastNonce: state.lastNonce,
      lastVersion: state.lastVersion,
      ackedVersion,
      nack: state.nack,
      sentVersions,
    };
  }

  /**
   * Every request's node. The first request's is checked against the limits and the server's authorization (which
   * ends the stream before anything is sent, docs/security.md#node-identity) and picks the stream's resource set;
   * it is the stream's node for good: a later request may repeat it (Envoy does), but one that carries another node
   * is refused with INVALID_ARGUMENT.
   */
  protected adoptNode(node: Node | undefined): void {
    if (this.#admitted) {
      checkSameNode(this.node, node);
      return;
    }
    if (node !== undefined) checkNode(this.host.limits, node);
    this.host.admit(this.peer, node);
    this.#admitted = true;
    this.#access = this.host.readAccess({ peer: this.peer, node });
    if (node === undefined) return;
    this.node = node;
    this.set = this.host.resolver.resolve(node);
    this.dynamicParameters = this.host.resolver.resolveDynamicParameters(node);
  }

  #decode(bytes: Uint8Array): Req {
    try {
      return fromBinary(this.schemas.request, bytes) as Req;
    } catch (error) {
      throw undecodable(this.schemas.request.name, error, this.host.limits);
    }
  }

  #addState(typeUrl: string): State {
    const state = this.newState(typeUrl);
    this.types.set(typeUrl, state);
    return state;
  }

  /** Records the response as the type's latest and hands it to the hooks: written, held back, or dropped. */
  /** `settle`: records what the client holds after this response, once it is written (or held back, or dropped). */
  #deliver(state: State, out: Outgoing, settle?: () => void): void {
    state.lastNonce = out.nonce;
    state.lastVersion = out.versionInfo;
    if (this.logger.isEnabled("trace")) {
      this.logger.trace(
        `response ${out.typeUrl} version ${out.versionInfo} nonce ${out.nonce}: ${out.resourceCount} resources`,
      );
    }
    const delivery = this.host.hooks.route(this.id, out.typeUrl);
    if (delivery === "held") state.withheld = out;
    else if (delivery === "sent") this.#write(state, out);
    if (this.#closed) return;
    settle?.();
    // A dropped response counts as sent and is not waited for: like a lost message, nothing asks for it again.
    this.host.hooks.emit(out.event(delivery));
  }

  #write(state: State, out: Outgoing): void {
    const queued = this.#call.queuedBytes;
    const limit = this.host.limits.maxQueuedBytesPerStream;
    if (queued > 0 && queued + out.wire.size > limit) {
      const message = `the client is not reading: ${queued} bytes wait and a ${out.wire.size}-byte response would exceed maxQueuedBytesPerStream (${limit} bytes)`;
      this.logger.warn(message);
      this.end(Code.ResourceExhausted, "queue-full", message);
      return;
    }
    state.unacked = true;
    state.unflushed++;
    this.#call.write(out.wire, () => {
      state.unflushed--;
      if (state.pending && !this.#closed) this.#scheduleFlush();
    });
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    this.host.flushes.schedule(this.#flushPendingBound);
  }

  readonly #flushPendingBound = (): void => this.#flushPending();

  #flushPending(): void {
    this.#flushScheduled = false;
    if (this.#closed) return;
    const due = [...this.types.entries()]
      .filter(([, state]) => state.pending)
      .sort(([a], [b]) => pushRank(a) - pushRank(b));
    for (const [, state] of due) {
      if (this.#closed) return;
      this.#guard(() => this.flushType(state));
    }
  }

  #guard(fn: () => void): void {
    if (this.#closed) return;
    try {
      fn();
    } catch (error) {
      if (error instanceof StreamRefusedError) {
        this.logger.warn(`refused ${this.peer.address ?? "a client"}: ${error.message}`);
        this.end(error.code, "unauthorized", error.message);
      } else if (error instanceof InvalidRequestError) {
        this.logger.warn(`invalid request: ${error.message}`);
        this.end(error.code, "invalid-request", error.message);
      } else {
        this.logger.error("internal error", error);
        this.end(Code.Internal, "internal-error", "internal error in the management server");
      }
    }
  }
}
