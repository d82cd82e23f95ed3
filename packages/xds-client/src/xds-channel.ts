// One xDS server: its transport, the ADS call on it (state of the world), per-type versions and nonces, request
// building, decoding and the one NACK per response. The cache entries it serves belong to the authorities that use
// this server; the channel changes their state and queues their watchers' callbacks.
import { create, fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import {
  canonicalText,
  comparePreference,
  type Expr,
  fromProto,
  matches,
  type Ranked,
  specificity,
  TRUE,
} from "@xdskit/constraint-matcher";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  type DynamicParameterConstraints,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type AuthorityState, statesOfType } from "./authority.js";
import type { Bootstrap, XdsServerConfig } from "./bootstrap-types.js";
import type { CallbackGroup, CallbackQueue } from "./callback-queue.js";
import { type Backoff, type Clock, createBackoff } from "./clock.js";
import type { XdsFeatures } from "./features.js";
import type { ScopedLogger } from "./logger.js";
import { XdsMetricName, type XdsMetricsRecorder } from "./metrics.js";
import { authorityOfName, canonicalName } from "./resource-name.js";
import type { ResourceState } from "./resource-state.js";
import type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";
import type { XdsStream, XdsTransport } from "./transport.js";
import { StatusCode, statusCodeName, XdsError } from "./xds-error.js";

export const RESOURCE_WRAPPER_TYPE_URL = "type.googleapis.com/envoy.service.discovery.v3.Resource";

/** What every channel of one client shares. */
export interface ChannelContext {
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  readonly clock: Clock;
  readonly random: () => number;
  readonly queue: CallbackQueue;
  readonly metrics: XdsMetricsRecorder;
  readonly target: string;
  readonly node: Node;
  readonly types: ReadonlyMap<string, ResourceType<unknown>>;
}

/** What a channel tells the client about the server's reachability. */
export interface ChannelEvents {
  /** An ADS call failed before any response; runs inside a callback group. */
  onConnectivityFailure(channel: XdsChannel, error: XdsError): void;
  /** A response arrived (the server is reachable and serving). */
  onResponse(channel: XdsChannel): void;
}

interface Decoded {
  readonly name: string;
  readonly constraints: Expr;
  readonly result: DecodeResult<unknown>;
  readonly any: Any;
}

interface TypeState {
  /** Last accepted version (ACKed, or advanced by a partly valid response). */
  version: string;
  /** Nonce of the last response on the current call. */
  nonce: string;
  /** The previous response's resources and their decode results, by position, to skip re-decoding. */
  previous: { bytes: Uint8Array; result: DecodeResult<unknown> }[];
}

interface AdsCall {
  readonly id: number;
  readonly stream: XdsStream<DiscoveryRequest, DiscoveryResponse>;
  receivedResponse: boolean;
  sentNode: boolean;
}

let nextCallId = 1;

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  return Buffer.compare(a, b) === 0;
}

export class XdsChannel {
  readonly authorities = new Set<AuthorityState>();
  private readonly typeStates = new Map<string, TypeState>();
  private call: AdsCall | undefined;
  private readonly backoff: Backoff;
  private retryTimer: unknown;
  private pendingTypes = new Set<string>();
  private flushScheduled = false;
  private closed = false;
  /** The current connectivity error, while the server is unreachable. */
  connectivityError: XdsError | undefined;
  /** A78 `connected`: an ADS call on this server has received a response and not failed since. */
  connected = false;
  private healthy = true;
  private readonly decodeContext: DecodeContext;

  constructor(
    readonly server: XdsServerConfig,
    private readonly transport: XdsTransport,
    private readonly context: ChannelContext,
    private readonly events: ChannelEvents,
    private readonly log: ScopedLogger,
  ) {
    this.backoff = createBackoff(context.random);
    this.decodeContext = { server, bootstrap: context.bootstrap, features: context.features };
  }

  /** Requests for `typeUrl` need sending: coalesced, so one tick of watch/unwatch calls makes one request per type. */
  subscriptionsChanged(typeUrl: string): void {
    if (this.closed) return;
    this.pendingTypes.add(typeUrl);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  close(): void {
    this.closed = true;
    this.cancelRetry();
    this.endCall();
    this.transport.close();
  }

  private flush(): void {
    this.flushScheduled = false;
    const types = this.pendingTypes;
    this.pendingTypes = new Set();
    if (this.closed) return;
    if (!this.hasSubscriptions()) {
      // Nothing watched on this server: close the stream; it reopens with the next watch.
      this.cancelRetry();
      this.endCall();
      return;
    }
    if (this.call) {
      for (const typeUrl of types) this.sendRequest(this.call, typeUrl);
    } else if (this.retryTimer === undefined) {
      this.startCall();
    }
  }

  private hasSubscriptions(): boolean {
    for (const authority of this.authorities) {
      for (const table of authority.resources.values()) if (table.size > 0) return true;
    }
    return false;
  }

  private subscribedTypes(): string[] {
    const types = new Set<string>();
    for (const authority of this.authorities) {
      for (const [typeUrl, table] of authority.resources) if (table.size > 0) types.add(typeUrl);
    }
    return [...types];
  }

  private typeState(typeUrl: string): TypeState {
    let state = this.typeStates.get(typeUrl);
    if (!state) {
      state = { version: "", nonce: "", previous: [] };
      this.typeStates.set(typeUrl, state);
    }
    return state;
  }

  private startCall(): void {
    const stream = this.transport.streamAggregatedResources();
    const call: AdsCall = { id: nextCallId++, stream, receivedResponse: false, sentNode: false };
    this.call = call;
    // A new stream starts with the last accepted versions and empty nonces.
    for (const typeState of this.typeStates.values()) typeState.nonce = "";
    this.log.debug(() => `ADS call #${call.id} started`);
    for (const typeUrl of this.subscribedTypes()) this.sendRequest(call, typeUrl);
    void this.readLoop(call);
  }

  private endCall(): void {
    const call = this.call;
    if (!call) return;
    this.call = undefined;
    call.stream.cancel();
    this.cancelTimers();
  }

  private cancelRetry(): void {
    if (this.retryTimer !== undefined) {
      this.context.clock.clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
  }

  /** Builds the request for one type from the current subscriptions; `errorDetail` makes it a NACK. */
  private buildRequest(
    call: AdsCall,
    typeUrl: string,
    errorDetail?: string,
  ): { request: DiscoveryRequest; states: ResourceState[] } {
    const typeState = this.typeState(typeUrl);
    const names: string[] = [];
    const seenNames = new Set<string>();
    const locators: { name: string; dynamicParameters: Record<string, string> }[] = [];
    const states: ResourceState[] = [];
    for (const authority of this.authorities) {
      for (const state of statesOfType(authority, typeUrl)) {
        states.push(state);
        if (state.parametersKey === "") {
          if (!seenNames.has(state.name)) {
            seenNames.add(state.name);
            names.push(state.name);
          }
        } else {
          locators.push({ name: state.name, dynamicParameters: { ...state.parameters } });
        }
      }
    }
    const request = create(DiscoveryRequestSchema, {
      versionInfo: typeState.version,
      typeUrl,
      responseNonce: typeState.nonce,
      resourceNames: names,
      resourceLocators: locators,
    });
    if (!call.sentNode) {
      request.node = this.context.node;
      call.sentNode = true;
    }
    if (errorDetail !== undefined) {
      request.errorDetail = {
        $typeName: "google.rpc.Status",
        code: StatusCode.INVALID_ARGUMENT,
        message: errorDetail,
        details: [],
      };
    }
    return { request, states };
  }

  private sendRequest(call: AdsCall, typeUrl: string, errorDetail?: string): void {
    const { request, states } = this.buildRequest(call, typeUrl, errorDetail);
    this.log.trace(
      () =>
        `ADS call #${call.id} sending ${typeUrl} v="${request.versionInfo}" nonce="${request.responseNonce}" names=${request.resourceNames.length + request.resourceLocators.length}${errorDetail === undefined ? "" : " NACK"}`,
    );
    call.stream.send(request).then(
      // A57: the does-not-exist timer starts once the subscription was written on the stream.
      () => {
        if (this.call === call) for (const state of states) this.maybeStartTimer(state);
      },
      () => {
        // The stream ended; the read loop reports why.
      },
    );
  }

  private maybeStartTimer(state: ResourceState): void {
    if (state.timerRunning || state.resource !== undefined || state.state !== "requested") return;
    if (state.watchers.size === 0) return;
    const transient = this.context.features.dataErrorHandling && this.server.resourceTimerIsTransientError;
    const ms = transient ? 30_000 : 15_000;
    state.startTimer(ms, () => {
      if (state.resource !== undefined || state.watchers.size === 0) return;
      const nodeId = this.context.bootstrap.node.id;
      const resource = { typeUrl: state.typeUrl, name: state.name };
      this.context.queue.grouped(() => {
        if (transient) {
          state.state = "timeout";
          const error = new XdsError(
            StatusCode.UNAVAILABLE,
            "timeout",
            `timeout obtaining resource ${state.name} from xDS server`,
            { nodeId, resource },
          );
          state.errorState = { details: error.detail, time: this.context.clock.now() };
          state.notifyError(error);
        } else {
          state.state = "does_not_exist";
          const error = new XdsError(StatusCode.NOT_FOUND, "does_not_exist", `resource ${state.name} does not exist`, {
            nodeId,
            resource,
          });
          state.errorState = { details: error.detail, time: this.context.clock.now() };
          state.notifyError(error);
        }
      });
    });
  }

  private cancelTimers(): void {
    for (const authority of this.authorities) {
      for (const table of authority.resources.values()) {
        for (const byParameters of table.values()) {
          for (const state of byParameters.values()) state.cancelTimer();
        }
      }
    }
  }

  private async readLoop(call: AdsCall): Promise<void> {
    let failure: unknown;
    try {
      for (;;) {
        const next = await call.stream.responses.next();
        if (this.call !== call) return;
        if (next.done) break;
        const group = this.onResponse(call, next.value);
        // Flow control: the next read waits for every watcher callback this response caused.
        await group.settled();
        if (this.call !== call) return;
      }
    } catch (error) {
      failure = error;
    }
    if (this.call === call) this.onCallEnded(call, failure);
  }

  private onCallEnded(call: AdsCall, failure: unknown): void {
    this.call = undefined;
    this.cancelTimers();
    this.connected = false;
    const status = describeFailure(failure);
    if (call.receivedResponse) {
      // A57: a stream that ends after a response is not an error; reconnect at once (backoff was reset).
      this.log.info(`ADS call #${call.id} ended (${status}); reconnecting`);
      if (this.hasSubscriptions()) this.startCall();
      return;
    }
    this.log.warn(`ADS call #${call.id} failed with no responses received (${status})`);
    if (this.healthy) {
      this.healthy = false;
      this.context.metrics.addCounter(XdsMetricName.serverFailure, 1, {
        "grpc.target": this.context.target,
        "grpc.xds.server": this.server.serverUri,
      });
    }
    const error = new XdsError(
      StatusCode.UNAVAILABLE,
      "connection",
      `xDS channel for server ${this.server.serverUri}: xDS call failed with no responses received; status: ${status}`,
      { nodeId: this.context.bootstrap.node.id, cause: failure },
    );
    this.connectivityError = error;
    // The client decides, per authority, between falling back to the next server and telling the watchers (A71).
    this.context.queue.grouped(() => this.events.onConnectivityFailure(this, error));
    const delay = this.backoff.next();
    this.retryTimer = this.context.clock.setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed && this.hasSubscriptions() && !this.call) this.startCall();
    }, delay);
  }

  private onResponse(call: AdsCall, response: DiscoveryResponse): CallbackGroup {
    if (!call.receivedResponse) {
      call.receivedResponse = true;
      this.backoff.reset();
      this.healthy = true;
      this.connected = true;
      this.connectivityError = undefined;
    }
    this.events.onResponse(this);
    const typeUrl = response.typeUrl;
    const type = this.context.types.get(typeUrl);
    if (!type) {
      this.log.warn(`ignoring a response of unknown resource type ${typeUrl}`);
      return this.context.queue.grouped(() => {});
    }
    const typeState = this.typeState(typeUrl);
    typeState.nonce = response.nonce;
    let outcome: { errors: string[]; valid: number } = { errors: [], valid: 0 };
    const group = this.context.queue.grouped(() => {
      outcome = this.applyResponse(type, typeState, response);
    });
    const { errors, valid } = outcome;
    if (errors.length === 0 || valid > 0) typeState.version = response.versionInfo;
    if (errors.length === 0) {
      this.sendRequest(call, typeUrl);
    } else {
      const detail = `xDS response validation errors: [${errors.join("; ")}] (node ID: ${this.context.bootstrap.node.id})`;
      this.log.warn(() => `NACK ${typeUrl} version ${response.versionInfo}: ${detail}`);
      this.sendRequest(call, typeUrl, detail);
    }
    return group;
  }

  /** Applies one SotW response to the cache. Runs inside a callback group. */
  private applyResponse(
    type: ResourceType<unknown>,
    typeState: TypeState,
    response: DiscoveryResponse,
  ): { errors: string[]; valid: number } {
    const errors: string[] = [];
    const seen = new Set<string>();
    const now = this.context.clock.now();
    const version = response.versionInfo;
    const previous = typeState.previous;
    const current: TypeState["previous"] = [];
    const decoded: Decoded[] = [];
    let constrained = false;
    let valid = 0;
    let invalid = 0;
    const resources = response.resources;
    for (let i = 0; i < resources.length; i++) {
      const entry = this.unwrap(resources[i]!, response.typeUrl);
      if ("error" in entry) {
        errors.push(`resource index ${i}: ${entry.error}`);
        invalid += 1;
        continue;
      }
      const { any, wrapperName, constraints } = entry;
      const before = previous[i];
      let result: DecodeResult<unknown>;
      if (before !== undefined && bytesEqual(before.bytes, any.value)) result = before.result;
      else result = safeDecode(type, any, this.decodeContext);
      current[i] = { bytes: any.value, result };
      const name = wrapperName ?? result.name;
      if (name !== undefined) seen.add(canonicalName(name));
      if (!result.ok) {
        invalid += 1;
        errors.push(
          name === undefined ? `resource index ${i}: ${result.error}` : `resource index ${i}: ${name}: ${result.error}`,
        );
      } else {
        valid += 1;
      }
      if (name === undefined) continue;
      if (constraints !== TRUE) constrained = true;
      decoded.push({ name, constraints, result, any });
    }
    typeState.previous = current;
    if (constrained) this.applyVariants(type.typeUrl, decoded, version, now);
    else {
      for (const d of decoded)
        for (const state of this.statesFor(type.typeUrl, d.name, TRUE)) this.apply(state, d, version, now);
    }
    if (this.context.features.dataErrorHandling) {
      response.resourceErrors.forEach((resourceError, i) => {
        const name = resourceError.resourceName?.name ?? "";
        const status = resourceError.errorDetail;
        invalid += 1;
        if (name === "") {
          errors.push(`resource_errors[${i}]: resource name is empty`);
          return;
        }
        if (!status || status.code === StatusCode.OK) {
          errors.push(`resource_errors[${i}]: ${name}: status is OK`);
          return;
        }
        let constraints: Expr;
        try {
          constraints = this.readConstraints(resourceError.resourceName?.dynamicParameterConstraints);
        } catch (error) {
          errors.push(`resource_errors[${i}]: ${name}: ${(error as Error).message}`);
          return;
        }
        seen.add(canonicalName(name));
        for (const state of this.statesFor(type.typeUrl, name, constraints)) {
          this.onResourceError(state, status.code, status.message, version, now);
        }
      });
    }
    if (type.allResourcesRequiredInSotW) {
      for (const authority of this.authorities) {
        for (const state of statesOfType(authority, type.typeUrl)) {
          if (state.resource !== undefined && !seen.has(state.name)) this.onDeleted(state, version);
        }
      }
    }
    const labels = {
      "grpc.target": this.context.target,
      "grpc.xds.server": this.server.serverUri,
      "grpc.xds.resource_type": type.typeUrl,
    };
    if (valid > 0) this.context.metrics.addCounter(XdsMetricName.resourceUpdatesValid, valid, labels);
    if (invalid > 0) this.context.metrics.addCounter(XdsMetricName.resourceUpdatesInvalid, invalid, labels);
    return { errors, valid };
  }

  private apply(state: ResourceState, d: Decoded, version: string, now: number): void {
    if (d.result.ok) this.onValid(state, d.result.value, d.any, version, now);
    else this.onInvalid(state, d.result.error, d.any, version, now);
  }

  /**
   * TP2: a response that carries variants. Each subscription gets the one variant its parameters match; when
   * several match, the most specific wins, ties broken by canonical text (protocol.md Part 1 item 5), and the
   * ambiguity is logged.
   */
  private applyVariants(typeUrl: string, decoded: Decoded[], version: string, now: number): void {
    const best = new Map<ResourceState, { d: Decoded; rank: Ranked; count: number }>();
    for (const d of decoded) {
      const rank = { specificity: specificity(d.constraints), canonicalText: canonicalText(d.constraints) };
      for (const state of this.statesFor(typeUrl, d.name, d.constraints)) {
        const held = best.get(state);
        if (!held) best.set(state, { d, rank, count: 1 });
        else {
          held.count += 1;
          if (comparePreference(rank, held.rank) < 0) {
            held.d = d;
            held.rank = rank;
          }
        }
      }
    }
    for (const [state, { d, rank, count }] of best) {
      if (count > 1) {
        this.log.warn(
          `${count} variants of ${state.name} match parameters ${JSON.stringify(state.parameters)}; using the most specific: ${rank.canonicalText}`,
        );
      }
      this.apply(state, d, version, now);
    }
  }

  /** The constraints of a variant, as an expression (TRUE for none). Throws ConstraintError when malformed. */
  private readConstraints(message: DynamicParameterConstraints | undefined): Expr {
    if (message === undefined || !this.context.features.dynamicParameters) return TRUE;
    return fromProto(message, { path: "resource_name.dynamic_parameter_constraints" });
  }

  /** Removes a `Resource` wrapper and checks the type URL. */
  private unwrap(any: Any, typeUrl: string): { any: Any; wrapperName?: string; constraints: Expr } | { error: string } {
    if (any.typeUrl !== RESOURCE_WRAPPER_TYPE_URL) {
      if (any.typeUrl !== typeUrl) return { error: `type URL ${any.typeUrl} does not match the response's ${typeUrl}` };
      return { any, constraints: TRUE };
    }
    let wrapper: ReturnType<typeof fromBinary<typeof ResourceSchema>>;
    try {
      wrapper = fromBinary(ResourceSchema, any.value);
    } catch (error) {
      return { error: `cannot decode the Resource wrapper: ${(error as Error).message}` };
    }
    const inner = wrapper.resource;
    if (!inner) return { error: "the Resource wrapper holds no resource" };
    if (inner.typeUrl !== typeUrl)
      return { error: `type URL ${inner.typeUrl} does not match the response's ${typeUrl}` };
    // A67: with dynamic parameters on, `resource_name` (when set) names the resource and carries its constraints.
    const resourceName = this.context.features.dynamicParameters ? wrapper.resourceName : undefined;
    if (resourceName !== undefined && resourceName.name !== "") {
      try {
        return {
          any: inner,
          wrapperName: resourceName.name,
          constraints: this.readConstraints(resourceName.dynamicParameterConstraints),
        };
      } catch (error) {
        return { error: `${resourceName.name}: ${(error as Error).message}` };
      }
    }
    return wrapper.name === ""
      ? { any: inner, constraints: TRUE }
      : { any: inner, wrapperName: wrapper.name, constraints: TRUE };
  }

  /** The cache entries a resource named `name` (with these constraints, if any) is for. */
  private statesFor(typeUrl: string, name: string, constraints: Expr): ResourceState[] {
    const authorityName = authorityOfName(name);
    if (authorityName === undefined) return [];
    const canonical = canonicalName(name);
    const out: ResourceState[] = [];
    for (const authority of this.authorities) {
      if (authority.name !== authorityName) continue;
      const byParameters = authority.resources.get(typeUrl)?.get(canonical);
      if (!byParameters) continue;
      for (const state of byParameters.values()) {
        if (constraints === TRUE || matches(constraints, state.parameters)) out.push(state);
      }
    }
    return out;
  }

  private resourceOf(state: ResourceState) {
    return { typeUrl: state.typeUrl, name: state.name };
  }

  private onValid(state: ResourceState, value: unknown, any: Any, version: string, now: number): void {
    state.cancelTimer();
    const cached = state.resource;
    const identical = cached !== undefined && bytesEqual(cached.any.value, any.value);
    const hadError = state.error !== undefined;
    if (state.deletionIgnored) {
      this.log.info(`resource ${state.name} is back; the ignored deletion is over`);
      state.deletionIgnored = false;
    }
    state.state = "acked";
    state.errorState = undefined;
    state.lastInvalid = undefined;
    state.error = undefined;
    if (identical && cached) {
      cached.version = version;
      // An identical resource notifies nobody, unless it clears an error the watchers were told about (A88).
      if (hadError) state.notifyResource();
      return;
    }
    state.resource = { value, version, any, lastUpdated: now };
    state.notifyResource();
  }

  private onInvalid(state: ResourceState, detail: string, any: Any, version: string, now: number): void {
    state.cancelTimer();
    const repeated = state.lastInvalid !== undefined && bytesEqual(state.lastInvalid, any.value);
    state.lastInvalid = any.value;
    state.state = "nacked";
    state.errorState = { details: detail, version, time: now, failedConfiguration: any };
    if (this.context.features.dataErrorHandling && this.server.failOnDataErrors) state.resource = undefined;
    if (repeated) return;
    state.notifyError(
      new XdsError(StatusCode.INVALID_ARGUMENT, "nacked", `invalid resource ${state.name}: ${detail}`, {
        nodeId: this.context.bootstrap.node.id,
        resource: this.resourceOf(state),
      }),
    );
  }

  private onResourceError(state: ResourceState, code: number, message: string, version: string, now: number): void {
    state.cancelTimer();
    state.state = "received_error";
    state.errorState = { details: message, version, time: now };
    const nodeId = this.context.bootstrap.node.id;
    const resource = this.resourceOf(state);
    const dataError = code === StatusCode.NOT_FOUND || code === StatusCode.PERMISSION_DENIED;
    if (dataError && this.server.failOnDataErrors) state.resource = undefined;
    const error =
      code === StatusCode.NOT_FOUND
        ? new XdsError(
            StatusCode.NOT_FOUND,
            "does_not_exist",
            `resource ${state.name} does not exist (server: ${message})`,
            { nodeId, resource },
          )
        : new XdsError(code as StatusCode, "server_error", `xDS server error for resource ${state.name}: ${message}`, {
            nodeId,
            resource,
          });
    state.notifyError(error);
  }

  private onDeleted(state: ResourceState, version: string): void {
    const nodeId = this.context.bootstrap.node.id;
    const error = new XdsError(
      StatusCode.NOT_FOUND,
      "does_not_exist",
      `resource ${state.name} was removed by the xDS server (version ${version})`,
      {
        nodeId,
        resource: this.resourceOf(state),
      },
    );
    if (!this.context.features.dataErrorHandling) {
      // Legacy A53.
      if (this.server.ignoreResourceDeletion) {
        if (!state.deletionIgnored) {
          state.deletionIgnored = true;
          this.log.warn(`ignoring the deletion of ${state.name} (server feature ignore_resource_deletion)`);
        }
        return;
      }
      state.resource = undefined;
      state.state = "does_not_exist";
      state.notifyError(error);
      return;
    }
    // A88: a deletion is a data error.
    if (this.server.failOnDataErrors) {
      state.resource = undefined;
      state.state = "does_not_exist";
      state.notifyError(error);
      return;
    }
    if (state.state === "does_not_exist") return;
    this.log.warn(`the xDS server removed ${state.name}; keeping the cached copy`);
    state.state = "does_not_exist";
    state.notifyError(error);
  }
}

function safeDecode(type: ResourceType<unknown>, any: Any, context: DecodeContext): DecodeResult<unknown> {
  try {
    return type.decode(any, context);
  } catch (error) {
    return { ok: false, error: `decoder failed: ${(error as Error).message}` };
  }
}

function describeFailure(failure: unknown): string {
  if (failure === undefined) return "OK";
  const code = (failure as { code?: unknown }).code;
  const message = (failure as { rawMessage?: unknown }).rawMessage ?? (failure as Error).message ?? String(failure);
  return typeof code === "number" ? `${statusCodeName(code)}: ${String(message)}` : String(message);
}
