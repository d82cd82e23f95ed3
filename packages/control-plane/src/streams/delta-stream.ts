import { create } from "@bufbuild/protobuf";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { diffHeld, distinctEntries } from "../held/held-diff.js";
import {
  type HeldState,
  heldAfter,
  heldFromInitialVersions,
  heldPruned,
  NOT_FOUND_SENT,
  UNKNOWN_VERSION,
} from "../held/held-state.js";
import type { PlanInit } from "../held/response-plan.js";
import type { RequestDisposition } from "../hooks/hook-events.js";
import { checkLocators, checkNames, checkTypeUrl } from "../limits.js";
import { entryLabel } from "../resources/entry.js";
import type { ServedGroup } from "../resources/served.js";
import type { SlotInit, TypeSubscription } from "../subscriptions/subscription.js";
import {
  deltaWireResource,
  type PreparedResponse,
  prepareResponse,
  resourceFor,
  toResourceErrors,
} from "./prepared-response.js";
import { emptyTypeState, StreamBase, type TypeState } from "./stream-base.js";
import type { StreamTypeInfo } from "./stream-info.js";

interface DeltaTypeState extends TypeState {
  ackedNonce: string;
}

/**
 * Incremental ADS (DeltaAggregatedResources). Requests change the subscription incrementally, so none is ignored;
 * nonces only say which response a request ACKs or NACKs. Responses carry the resources that changed (wrapped in
 * `Resource` with name and version), `removed_resources` for resources the client holds that are gone and for
 * names subscribed by name that do not exist, and TP3 `resource_errors`. A `resource_locators_subscribe` entry is a
 * subscription of its own, getting the variant its parameters match (TP2), wrapped with `resource_name`; a variant
 * the client no longer gets goes in `removed_resource_names` with its constraints, in the same response as the
 * variant that replaces it.
 */
export class DeltaStream extends StreamBase<DeltaDiscoveryRequest, DeltaDiscoveryResponse, DeltaTypeState> {
  protected newState(typeUrl: string): DeltaTypeState {
    return { ...emptyTypeState(typeUrl), ackedNonce: "" };
  }

  protected typeInfo(state: DeltaTypeState): Omit<StreamTypeInfo, "waitingFor" | "pending"> {
    return this.commonInfo(state, state.ackedNonce, (version) =>
      version === NOT_FOUND_SENT ? undefined : version === UNKNOWN_VERSION ? "?" : String(version),
    );
  }

  protected handleRequest(request: DeltaDiscoveryRequest): void {
    const typeUrl = request.typeUrl;
    checkTypeUrl(this.host.limits, typeUrl, "DeltaDiscoveryRequest");
    this.adoptNode(request.node);
    const what = `DeltaDiscoveryRequest for ${typeUrl}`;
    const subscribe = [...request.resourceNamesSubscribe, ...request.resourceLocatorsSubscribe.map((l) => l.name)];
    const unsubscribe = [
      ...request.resourceNamesUnsubscribe,
      ...request.resourceLocatorsUnsubscribe.map((l) => l.name),
    ];
    const initialNames = Object.keys(request.initialResourceVersions);
    checkNames(this.host.limits, what, [...subscribe, ...unsubscribe, ...initialNames]);
    checkLocators(this.host.limits, what, [
      ...request.resourceLocatorsSubscribe,
      ...request.resourceLocatorsUnsubscribe,
    ]);
    const toSlots = (names: readonly string[], locators: typeof request.resourceLocatorsSubscribe): SlotInit[] => [
      ...names.map((name) => ({ name })),
      ...locators.map((l) => ({ name: l.name, params: l.dynamicParameters })),
    ];

    const firstRequest = !this.types.has(typeUrl);
    const state = this.stateOf(typeUrl, what);
    let disposition: RequestDisposition;
    if (request.responseNonce === "") disposition = "subscribe";
    else if (request.errorDetail) disposition = "nack";
    else disposition = "ack";
    if (disposition === "nack") state.nack = request.errorDetail;
    else if (disposition === "ack") {
      state.ackedNonce = request.responseNonce;
      state.nack = undefined;
    }
    if (disposition !== "subscribe" && request.responseNonce === state.lastNonce) this.acknowledged(state);

    const sub = state.sub;
    if (firstRequest) {
      state.holds = heldFromInitialVersions(request.initialResourceVersions);
      if (subscribe.length === 0 && this.host.fullStateTypeUrls.has(typeUrl)) sub.subscribe([{ name: "*" }]);
    }
    sub.subscribe(toSlots(request.resourceNamesSubscribe, request.resourceLocatorsSubscribe));
    const unsubscribed = sub.unsubscribe(
      toSlots(request.resourceNamesUnsubscribe, request.resourceLocatorsUnsubscribe),
    );
    // Wildcards count as names: one per parameter map (docs/decisions.md#wildcards-with-parameters).
    checkNames(this.host.limits, what, [], sub.slots.size + sub.wildcardCount);
    if (unsubscribed || firstRequest) state.holds = heldPruned(state.holds, sub);

    this.host.hooks.emit({
      type: "request",
      kind: "delta",
      streamId: this.id,
      node: this.node,
      typeUrl,
      responseNonce: request.responseNonce,
      errorDetail: request.errorDetail,
      disposition,
      request,
      subscribe,
      unsubscribe,
    });
    this.flushType(state);
  }

  protected readonly schemas = { request: DeltaDiscoveryRequestSchema, response: DeltaDiscoveryResponseSchema };

  protected injectedParts(message: DeltaDiscoveryResponse) {
    return {
      versionInfo: message.systemVersionInfo,
      resourceNames: message.resources.map((r) => r.resourceName?.name ?? r.name),
      removedNames: message.removedResources,
    };
  }

  protected planResponse(
    holds: HeldState,
    sub: TypeSubscription,
    entries: ReadonlyMap<string, ServedGroup> | undefined,
    versionInfo: string,
    changedNames: readonly string[] | undefined,
  ): PlanInit<PreparedResponse> {
    const typeUrl = sub.typeUrl;
    const diff = diffHeld(holds, sub, entries, changedNames);
    const removed = diff.removed;
    const controlPlane = this.host.controlPlane;
    const content = () => {
      const resources = distinctEntries(diff.changed);
      const errors = distinctEntries(diff.errors);
      return prepareResponse(
        DeltaDiscoveryResponseSchema,
        {
          typeUrl,
          versionInfo,
          resourceNames: resources.map(entryLabel),
          errorNames: errors.map(entryLabel),
          removedNames: removed.map(entryLabel),
        },
        create(DeltaDiscoveryResponseSchema, {
          systemVersionInfo: versionInfo,
          typeUrl,
          removedResources: removed.filter((r) => r.variant === undefined).map((r) => r.name),
          removedResourceNames: removed.flatMap((r) => (r.variant ? [r.variant.resourceName] : [])),
          resourceErrors: toResourceErrors(errors),
          ...(controlPlane ? { controlPlane } : {}),
        }),
        { wire: resources.map(deltaWireResource), messages: () => resources.map(resourceFor) },
      );
    };
    return {
      send: diff.changed.keys.length > 0 || diff.errors.keys.length > 0 || removed.length > 0,
      content,
      next: () =>
        heldAfter(holds, {
          replace: false,
          resources: diff.changed,
          errors: diff.errors,
          notFound: diff.notFound,
          forgotten: diff.forgotten,
        }),
    };
  }
}
