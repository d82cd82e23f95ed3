// What a decoded response does to the cache entries it reaches, the same for state of the world and delta: A88's
// rules for valid resources, invalid ones, TP3 resource errors, deletions and the does-not-exist timer. Called by the
// cache (resource-cache.ts) in the mutation path, inside a callback group; watchers hear of it through the queue.
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { ScopedLogger } from "../observability/logger.js";
import type { Clock } from "../shared/clock.js";
import type { XdsFeatures } from "../shared/features.js";
import { StatusCode, XdsError } from "../shared/xds-error.js";
import type { HeldVariant, ResourceState } from "../state/resource-state.js";
import type { DecodedResource } from "../wire/decoded-response.js";
import { anyOfText } from "../wire/resource-bytes.js";

/** What applying an update depends on besides the entry. */
export interface UpdateContext {
  readonly server: XdsServerConfig;
  readonly features: XdsFeatures;
  readonly nodeId: string;
  readonly clock: Clock;
  readonly log: ScopedLogger;
}

function resourceOf(state: ResourceState) {
  return { typeUrl: state.typeUrl, name: state.name };
}

/** A resource of a response, valid or not, for this entry. `version` is the response's (delta: the resource's). */
export function applyResource(context: UpdateContext, state: ResourceState, d: DecodedResource, version: string): void {
  state.variant = d.variant;
  if (d.ok) valid(context, state, d.value, d.bytes, d.variant, version);
  else invalid(context, state, d.detail ?? "", d.bytes, version);
}

/**
 * The SotW re-push of an accepted resource (docs/architecture.md#the-byte-identical-skip): when the entry is ACKed
 * with exactly this resource and variant, and holds no error, ignored deletion or ambient error to clear, applying
 * `d` again would only move its version, which this does; true then. Otherwise it does nothing and returns false (the
 * caller applies `d`). test/reapply-identical.test.ts checks it against `applyResource`.
 */
export function reapplyIdentical(state: ResourceState, d: DecodedResource, version: string): boolean {
  const cached = state.resource;
  if (
    cached === undefined ||
    cached.bytes !== d.bytes ||
    !d.ok ||
    state.state !== "acked" ||
    cached.variant.key !== d.variant.key ||
    state.error !== undefined ||
    state.errorState !== undefined ||
    state.lastInvalid !== undefined ||
    state.deletionIgnored ||
    !state.settled
  ) {
    return false;
  }
  state.variant = d.variant;
  cached.version = version;
  return true;
}

function valid(
  context: UpdateContext,
  state: ResourceState,
  value: unknown,
  bytes: string,
  variant: HeldVariant,
  version: string,
) {
  const cached = state.resource;
  const identical = cached !== undefined && cached.variant.key === variant.key && cached.bytes === bytes;
  if (state.deletionIgnored) {
    context.log.info(`resource ${state.name} is back; the ignored deletion is over`);
    state.deletionIgnored = false;
  }
  state.state = "acked";
  state.errorState = undefined;
  state.lastInvalid = undefined;
  state.error = undefined;
  if (identical && cached) {
    cached.version = version;
    // An identical resource notifies nobody, unless it ends an ambient error the watchers were told (A88).
    state.notifyCleared();
    return;
  }
  state.resource = { value, version, bytes, variant, lastUpdated: context.clock.now() };
  state.notifyResource();
}

function invalid(context: UpdateContext, state: ResourceState, detail: string, bytes: string, version: string) {
  const repeated = state.lastInvalid === bytes;
  state.lastInvalid = bytes;
  state.state = "nacked";
  const failedConfiguration = anyOfText(state.typeUrl, bytes);
  state.errorState = { details: detail, version, time: context.clock.now(), failedConfiguration };
  if (context.features.dataErrorHandling && context.server.failOnDataErrors) state.resource = undefined;
  if (repeated) return;
  state.notifyError(
    new XdsError(StatusCode.INVALID_ARGUMENT, "nacked", `invalid resource ${state.name}: ${detail}`, {
      nodeId: context.nodeId,
      resource: resourceOf(state),
    }),
  );
}

/** TP3: a `ResourceError` for this entry (`code` already within gRPC's range). */
export function applyResourceError(
  context: UpdateContext,
  state: ResourceState,
  variant: HeldVariant,
  code: StatusCode,
  message: string,
  version: string,
): void {
  state.variant = variant;
  state.state = "received_error";
  state.errorState = { details: message, version, time: context.clock.now() };
  state.lastInvalid = undefined;
  const nodeId = context.nodeId;
  const resource = resourceOf(state);
  // TP3: NOT_FOUND and PERMISSION_DENIED are data errors; every other code is transient.
  const dataError = code === StatusCode.NOT_FOUND || code === StatusCode.PERMISSION_DENIED;
  if (dataError && context.server.failOnDataErrors) state.resource = undefined;
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
      : new XdsError(code, "server_error", `xDS server error for resource ${state.name}: ${message}`, {
          nodeId,
          resource,
        });
  state.notifyError(error);
}

/**
 * The server removed the resource (omitted from a SotW LDS/CDS response, or a delta removal). A delta removal of a
 * name that never had an answer says it does not exist: nothing was removed.
 */
export function applyDeletion(context: UpdateContext, state: ResourceState, version: string): void {
  const neverHeld = state.resource === undefined && (state.state === "requested" || state.state === "timeout");
  const detail = neverHeld
    ? `resource ${state.name} does not exist on the xDS server (version ${version})`
    : `resource ${state.name} was removed by the xDS server (version ${version})`;
  const error = new XdsError(StatusCode.NOT_FOUND, "does_not_exist", detail, {
    nodeId: context.nodeId,
    resource: resourceOf(state),
  });
  const becomeDoesNotExist = (drop: boolean) => {
    if (drop) state.resource = undefined;
    state.state = "does_not_exist";
    state.errorState = { details: detail, version, time: context.clock.now() };
    state.lastInvalid = undefined;
    state.notifyError(error);
  };
  if (state.resource === undefined) {
    if (state.state !== "does_not_exist") becomeDoesNotExist(false);
    return;
  }
  if (!context.features.dataErrorHandling) {
    // Legacy A53.
    if (context.server.ignoreResourceDeletion) {
      if (!state.deletionIgnored) {
        state.deletionIgnored = true;
        context.log.warn(`ignoring the deletion of ${state.name} (server feature ignore_resource_deletion)`);
      }
      return;
    }
    becomeDoesNotExist(true);
    return;
  }
  // A88: a deletion is a data error.
  if (context.server.failOnDataErrors) {
    becomeDoesNotExist(true);
    return;
  }
  if (state.state === "does_not_exist") return;
  context.log.warn(`the xDS server removed ${state.name}; keeping the cached copy`);
  becomeDoesNotExist(false);
}

/** A57: the does-not-exist timer fired for an entry still waiting for its first answer. */
export function applyTimeout(context: UpdateContext, state: ResourceState, transient: boolean): void {
  if (!state.isWaiting()) return;
  const options = { nodeId: context.nodeId, resource: resourceOf(state) };
  const error = transient
    ? new XdsError(
        StatusCode.UNAVAILABLE,
        "timeout",
        `timeout obtaining resource ${state.name} from xDS server`,
        options,
      )
    : new XdsError(StatusCode.NOT_FOUND, "does_not_exist", `resource ${state.name} does not exist`, options);
  state.state = transient ? "timeout" : "does_not_exist";
  // CSDS: details only, no version or time (nothing was received).
  state.errorState = { details: error.detail };
  state.notifyError(error);
}
