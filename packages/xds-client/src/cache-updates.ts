// What a response does to the cache, the same for state of the world and delta: decode (once per distinct bytes),
// route to the subscriptions a resource is for (TP2 variants included), and apply A88's rules for valid resources,
// invalid ones, TP3 resource errors, deletions and the does-not-exist timer. Runs in a channel's mutation path,
// inside a callback group; watchers hear of it through the callback queue.
import { fromBinary } from "@bufbuild/protobuf";
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
  type DynamicParameterConstraints,
  type Resource,
  type ResourceError,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { AuthorityState } from "./authority.js";
import type { Bootstrap, XdsServerConfig } from "./bootstrap-types.js";
import type { CallbackQueue } from "./callback-queue.js";
import type { Clock } from "./clock.js";
import type { XdsFeatures } from "./features.js";
import type { ScopedLogger } from "./logger.js";
import { XdsMetricName, type XdsMetricsRecorder } from "./metrics.js";
import { authorityOfName, canonicalName } from "./resource-name.js";
import type { ResourceState } from "./resource-state.js";
import type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";
import { StatusCode, XdsError } from "./xds-error.js";

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

/** One resource of a response, decoded and named. */
export interface Decoded {
  /** Canonical (`canonicalName`). */
  readonly name: string;
  readonly constraints: Expr;
  readonly result: DecodeResult<unknown>;
  readonly any: Any;
  /** Delta: the resource's own version. */
  readonly version?: string;
}

/** A resource taken out of its `Resource` wrapper, or why it cannot be. */
export type Unwrapped =
  | { readonly any: Any; readonly name?: string; readonly constraints: Expr }
  | { readonly error: string };

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  return Buffer.compare(a, b) === 0;
}

/** Decodes and validates, turning a throwing decoder into a failure (decoders should not throw, but may). */
export function safeDecode(type: ResourceType<unknown>, any: Any, context: DecodeContext): DecodeResult<unknown> {
  try {
    return type.decode(any, context);
  } catch (error) {
    return { ok: false, error: `decoder failed: ${(error as Error).message}` };
  }
}

/** Keeps the previous response's decode results by position, so an unchanged resource is not decoded twice. */
export class DecodeMemo {
  private previous: { bytes: Uint8Array; result: DecodeResult<unknown> }[] = [];
  private current: { bytes: Uint8Array; result: DecodeResult<unknown> }[] = [];

  decode(index: number, type: ResourceType<unknown>, any: Any, context: DecodeContext): DecodeResult<unknown> {
    const before = this.previous[index];
    const result =
      before !== undefined && bytesEqual(before.bytes, any.value) ? before.result : safeDecode(type, any, context);
    this.current[index] = { bytes: any.value, result };
    return result;
  }

  /** Call after each response: what was decoded becomes the reference for the next one. */
  rotate(): void {
    this.previous = this.current;
    this.current = [];
  }
}

export class CacheUpdater {
  readonly decodeContext: DecodeContext;

  constructor(
    readonly server: XdsServerConfig,
    private readonly context: ChannelContext,
    private readonly log: ScopedLogger,
  ) {
    this.decodeContext = { server, bootstrap: context.bootstrap, features: context.features };
  }

  /** The constraints of a variant, as an expression (TRUE for none). Throws ConstraintError when malformed. */
  readConstraints(message: DynamicParameterConstraints | undefined): Expr {
    if (message === undefined || !this.context.features.dynamicParameters) return TRUE;
    return fromProto(message, { path: "resource_name.dynamic_parameter_constraints" });
  }

  /** Reads a `Resource` (a SotW wrapper or a delta resource) whose payload must be of `typeUrl`. */
  unwrapResource(wrapper: Resource, typeUrl: string): Unwrapped {
    const inner = wrapper.resource;
    if (!inner) return { error: "the Resource holds no resource" };
    if (inner.typeUrl !== typeUrl)
      return { error: `type URL ${inner.typeUrl} does not match the response's ${typeUrl}` };
    // A67: with dynamic parameters on, `resource_name` (when set) names the resource and carries its constraints.
    const resourceName = this.context.features.dynamicParameters ? wrapper.resourceName : undefined;
    if (resourceName !== undefined && resourceName.name !== "") {
      try {
        return {
          any: inner,
          name: resourceName.name,
          constraints: this.readConstraints(resourceName.dynamicParameterConstraints),
        };
      } catch (error) {
        return { error: `${resourceName.name}: ${(error as Error).message}` };
      }
    }
    return wrapper.name === ""
      ? { any: inner, constraints: TRUE }
      : { any: inner, name: wrapper.name, constraints: TRUE };
  }

  /** A SotW entry: a resource of `typeUrl`, or one wrapped in `Resource`. */
  unwrapSotw(any: Any, typeUrl: string): Unwrapped {
    if (any.typeUrl !== RESOURCE_WRAPPER_TYPE_URL) {
      if (any.typeUrl !== typeUrl) return { error: `type URL ${any.typeUrl} does not match the response's ${typeUrl}` };
      return { any, constraints: TRUE };
    }
    let wrapper: Resource;
    try {
      wrapper = fromBinary(ResourceSchema, any.value);
    } catch (error) {
      return { error: `cannot decode the Resource wrapper: ${(error as Error).message}` };
    }
    return this.unwrapResource(wrapper, typeUrl);
  }

  /**
   * The cache entries a resource is for, among `authorities`: its name must already be canonical (`canonicalName`,
   * done once per resource by the caller), its constraints matched against each entry's parameters.
   */
  statesFor(
    authorities: Iterable<AuthorityState>,
    typeUrl: string,
    canonical: string,
    constraints: Expr,
  ): ResourceState[] {
    const authorityName = authorityOfName(canonical);
    if (authorityName === undefined) return [];
    const out: ResourceState[] = [];
    for (const authority of authorities) {
      if (authority.name !== authorityName) continue;
      const byParameters = authority.resources.get(typeUrl)?.get(canonical);
      if (!byParameters) continue;
      for (const state of byParameters.values()) {
        if (constraints === TRUE || matches(constraints, state.parameters)) out.push(state);
      }
    }
    return out;
  }

  /**
   * Applies decoded resources. When some carry TP2 constraints, each subscription gets the one variant its
   * parameters match; when several match, the most specific wins, ties broken by canonical text (protocol.md Part 1
   * item 5), and the ambiguity is logged.
   */
  applyDecoded(
    authorities: Iterable<AuthorityState>,
    typeUrl: string,
    decoded: readonly Decoded[],
    version: string,
  ): void {
    const now = this.context.clock.now();
    if (!decoded.some((d) => d.constraints !== TRUE)) {
      for (const d of decoded) {
        for (const state of this.statesFor(authorities, typeUrl, d.name, TRUE)) this.apply(state, d, version, now);
      }
      return;
    }
    const best = new Map<ResourceState, { d: Decoded; rank: Ranked; count: number }>();
    for (const d of decoded) {
      const rank = { specificity: specificity(d.constraints), canonicalText: canonicalText(d.constraints) };
      for (const state of this.statesFor(authorities, typeUrl, d.name, d.constraints)) {
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

  private apply(state: ResourceState, d: Decoded, version: string, now: number): void {
    if (d.result.ok) this.valid(state, d.result.value, d.any, d.version ?? version, now);
    else this.invalid(state, d.result.error, d.any, d.version ?? version, now);
  }

  private resourceOf(state: ResourceState) {
    return { typeUrl: state.typeUrl, name: state.name };
  }

  private valid(state: ResourceState, value: unknown, any: Any, version: string, now: number): void {
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

  private invalid(state: ResourceState, detail: string, any: Any, version: string, now: number): void {
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

  /** TP3: a `ResourceError` for this entry. */
  resourceError(state: ResourceState, code: number, message: string, version: string): void {
    state.cancelTimer();
    state.state = "received_error";
    state.errorState = { details: message, version, time: this.context.clock.now() };
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
            {
              nodeId,
              resource,
            },
          )
        : new XdsError(code as StatusCode, "server_error", `xDS server error for resource ${state.name}: ${message}`, {
            nodeId,
            resource,
          });
    state.notifyError(error);
  }

  /** The server removed the resource (omitted from a SotW LDS/CDS response, or a delta removal). */
  deleted(state: ResourceState, version: string): void {
    state.cancelTimer();
    const error = new XdsError(
      StatusCode.NOT_FOUND,
      "does_not_exist",
      `resource ${state.name} was removed by the xDS server (version ${version})`,
      { nodeId: this.context.bootstrap.node.id, resource: this.resourceOf(state) },
    );
    if (state.resource === undefined) {
      if (state.state === "does_not_exist") return;
      state.state = "does_not_exist";
      state.notifyError(error);
      return;
    }
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

  /** A57: starts the does-not-exist timer once the subscription was written on a stream, for uncached entries. */
  maybeStartTimer(state: ResourceState): void {
    if (state.timerRunning || state.resource !== undefined || state.state !== "requested") return;
    if (state.watchers.size === 0) return;
    const transient = this.context.features.dataErrorHandling && this.server.resourceTimerIsTransientError;
    state.startTimer(transient ? 30_000 : 15_000, () => {
      if (state.resource !== undefined || state.watchers.size === 0) return;
      const nodeId = this.context.bootstrap.node.id;
      const resource = this.resourceOf(state);
      const error = transient
        ? new XdsError(StatusCode.UNAVAILABLE, "timeout", `timeout obtaining resource ${state.name} from xDS server`, {
            nodeId,
            resource,
          })
        : new XdsError(StatusCode.NOT_FOUND, "does_not_exist", `resource ${state.name} does not exist`, {
            nodeId,
            resource,
          });
      this.context.queue.grouped(() => {
        state.state = transient ? "timeout" : "does_not_exist";
        state.errorState = { details: error.detail, time: this.context.clock.now() };
        state.notifyError(error);
      });
    });
  }

  /** A78 validity counters, per resource. */
  countUpdates(typeUrl: string, valid: number, invalid: number): void {
    const labels = {
      "grpc.target": this.context.target,
      "grpc.xds.server": this.server.serverUri,
      "grpc.xds.resource_type": typeUrl,
    };
    if (valid > 0) this.context.metrics.addCounter(XdsMetricName.resourceUpdatesValid, valid, labels);
    if (invalid > 0) this.context.metrics.addCounter(XdsMetricName.resourceUpdatesInvalid, invalid, labels);
  }

  /** TP3 entries of a response, applied (when A88 is on); malformed ones are added to `errors`. Returns their count. */
  applyResourceErrors(
    authorities: Iterable<AuthorityState>,
    typeUrl: string,
    entries: readonly ResourceError[],
    version: string,
    errors: string[],
    seen: Set<string>,
  ): number {
    if (!this.context.features.dataErrorHandling) return 0;
    entries.forEach((entry, i) => {
      const name = entry.resourceName?.name ?? "";
      const status = entry.errorDetail;
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
        constraints = this.readConstraints(entry.resourceName?.dynamicParameterConstraints);
      } catch (error) {
        errors.push(`resource_errors[${i}]: ${name}: ${(error as Error).message}`);
        return;
      }
      const canonical = canonicalName(name);
      seen.add(canonical);
      for (const state of this.statesFor(authorities, typeUrl, canonical, constraints)) {
        this.resourceError(state, status.code, status.message, version);
      }
    });
    return entries.length;
  }
}

/** The NACK text: every problem of the response, and the node ID. */
export function nackDetail(errors: readonly string[], nodeId: string): string {
  return `xDS response validation errors: [${errors.join("; ")}] (node ID: ${nodeId})`;
}
