import { create } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { diffHeld, distinctEntries, fullState } from "../held/held-diff.js";
import { type HeldState, heldAfter, heldPruned, type SentBySlot } from "../held/held-state.js";
import type { PlanInit } from "../held/response-plan.js";
import type { RequestDisposition } from "../hooks/hook-events.js";
import { checkLocators, checkNames, checkTypeUrl } from "../limits.js";
import { entryLabel } from "../resources/entry.js";
import type { ServedGroup } from "../resources/served.js";
import { PLAIN_WILDCARD, type SlotInit, type TypeSubscription, wildcardsOf } from "../subscriptions/subscription.js";
import { anyFor, type PreparedResponse, prepareResponse, toResourceErrors } from "./prepared-response.js";
import { emptyTypeState, StreamBase, type TypeState } from "./stream-base.js";
import type { StreamTypeInfo } from "./stream-info.js";

interface SotwTypeState extends TypeState {
  /** The client asked for this type (a type only injected into is not pushed to). */
  requested: boolean;
  /** The stream is in legacy wildcard mode: its first request for this LDS/CDS type named nothing. */
  legacyWildcard: boolean;
  ackedVersion: string;
}

/**
 * State of the world ADS (StreamAggregatedResources), as Envoy and go-control-plane define it:
 * - versions and nonces are tracked per type; a request whose nonce is not the latest response's of its type is
 *   stale and ignored entirely (its subscription changes too: the client repeats them when it ACKs);
 * - the server remembers what it sent, so a NACK never brings the same version again;
 * - full-state types (LDS, CDS) carry every subscribed resource that exists whenever anything about them changes;
 *   other types carry only the resources that changed or were newly subscribed;
 * - an LDS/CDS first request naming nothing, or any request naming `*`, subscribes to every resource of the type;
 * - each `resource_locators` entry is a subscription of its own, getting the variant its parameters match (TP2);
 *   one response lists the variant of every subscription, so two subscriptions of one name may get two variants.
 */
export class SotwStream extends StreamBase<DiscoveryRequest, DiscoveryResponse, SotwTypeState> {
  protected newState(typeUrl: string): SotwTypeState {
    return { ...emptyTypeState(typeUrl), requested: false, legacyWildcard: false, ackedVersion: "" };
  }

  protected typeInfo(state: SotwTypeState): Omit<StreamTypeInfo, "waitingFor" | "pending"> {
    return this.commonInfo(state, state.ackedVersion, (version) => String(version));
  }

  protected handleRequest(request: DiscoveryRequest): void {
    const typeUrl = request.typeUrl;
    checkTypeUrl(this.host.limits, typeUrl, "DiscoveryRequest");
    this.adoptNode(request.node);
    const what = `DiscoveryRequest for ${typeUrl}`;
    const names = [...request.resourceNames];
    for (const locator of request.resourceLocators) names.push(locator.name);
    checkNames(this.host.limits, what, names);
    checkLocators(this.host.limits, what, request.resourceLocators);

    const existing = this.types.get(typeUrl);
    let disposition: RequestDisposition;
    if (existing === undefined || existing.lastNonce === "") disposition = "subscribe";
    else if (request.responseNonce !== existing.lastNonce) disposition = "stale";
    else disposition = request.errorDetail ? "nack" : "ack";
    if (disposition === "stale") {
      this.#report(request, names, "stale");
      return;
    }
    const state = existing ?? this.stateOf(typeUrl, `DiscoveryRequest for ${typeUrl}`);
    if (disposition === "nack") {
      state.nack = request.errorDetail;
      this.acknowledged(state);
      this.logger.debug(`NACK of ${typeUrl} nonce ${request.responseNonce}: ${request.errorDetail?.message ?? ""}`);
    } else if (disposition === "ack") {
      state.ackedVersion = request.versionInfo;
      state.nack = undefined;
      this.acknowledged(state);
    }

    const fullState = this.host.fullStateTypeUrls.has(typeUrl);
    const firstRequest = !state.requested;
    const slots: SlotInit[] = request.resourceNames.map((name) => ({ name }));
    for (const locator of request.resourceLocators)
      slots.push({ name: locator.name, params: locator.dynamicParameters });
    // `*` by name or as locators with parameters (docs/decisions.md#wildcards-with-parameters).
    let wildcards = wildcardsOf(slots);
    state.requested = true;
    if (wildcards.length > 0) state.legacyWildcard = false;
    else if (names.length === 0 && fullState && (firstRequest || state.legacyWildcard)) {
      wildcards = [PLAIN_WILDCARD];
      state.legacyWildcard = true;
    } else state.legacyWildcard = false;
    if (state.sub.replace(slots, wildcards)) state.holds = heldPruned(state.holds, state.sub);
    this.#report(request, names, disposition);
    this.flushType(state);
  }

  protected readonly schemas = { request: DiscoveryRequestSchema, response: DiscoveryResponseSchema };

  protected injectedParts(message: DiscoveryResponse) {
    // The server does not decode what a test injects.
    return { versionInfo: message.versionInfo, resourceNames: [], removedNames: [] };
  }

  /**
   * A type only injected into is not pushed to; a wildcard client learns that there is nothing from an empty first
   * response; a full-state response waits while the source does not know yet what a wildcard covers (served.ts).
   */
  protected override isDue(state: SotwTypeState, send: boolean): boolean {
    if (!state.requested) return false;
    const { sub } = state;
    if (sub.wildcard && this.host.fullStateTypeUrls.has(sub.typeUrl)) {
      const set = this.setOf(sub.typeUrl);
      for (const wildcard of sub.wildcards) {
        if (set.wildcardAnswered?.(sub.typeUrl, wildcard.params) === false) return false;
      }
    }
    return send || (sub.wildcard && state.lastNonce === "");
  }

  protected planResponse(
    holds: HeldState,
    sub: TypeSubscription,
    entries: ReadonlyMap<string, ServedGroup> | undefined,
    versionInfo: string,
    changedNames: readonly string[] | undefined,
  ): PlanInit<PreparedResponse> {
    const typeUrl = sub.typeUrl;
    let sent: SentBySlot;
    let send: boolean;
    let waiting = false;
    if (this.host.fullStateTypeUrls.has(typeUrl)) {
      // Every subscription's resource, whenever anything about them changed; nothing while one is not answered
      // yet, since leaving it out would tell the client it is gone.
      const state = fullState(holds, sub, entries);
      sent = { replace: true, resources: state.resources, errors: state.errors };
      waiting = state.waiting;
      send = state.differs && !waiting;
    } else {
      // What changed or is newly subscribed; a resource that is gone stays with the client until it unsubscribes.
      const { changed, errors } = diffHeld(holds, sub, entries, changedNames);
      sent = { replace: false, resources: changed, errors };
      send = changed.keys.length > 0 || errors.keys.length > 0;
    }
    const { controlPlane, wrapResources } = this.host;
    const content = () => {
      const resources = distinctEntries(sent.resources);
      const errors = distinctEntries(sent.errors);
      const anys = resources.map((entry) => anyFor(entry, wrapResources));
      return prepareResponse(
        DiscoveryResponseSchema,
        {
          typeUrl,
          versionInfo,
          resourceNames: resources.map(entryLabel),
          errorNames: errors.map(entryLabel),
          removedNames: [],
        },
        create(DiscoveryResponseSchema, {
          versionInfo,
          typeUrl,
          resourceErrors: toResourceErrors(errors),
          ...(controlPlane ? { controlPlane } : {}),
        }),
        { wire: anys, messages: () => anys },
      );
    };
    return { send, waiting, content, next: () => heldAfter(holds, sent) };
  }

  #report(request: DiscoveryRequest, names: string[], disposition: RequestDisposition): void {
    this.host.hooks.emit({
      type: "request",
      kind: "sotw",
      streamId: this.id,
      node: this.node,
      typeUrl: request.typeUrl,
      responseNonce: request.responseNonce,
      errorDetail: request.errorDetail,
      disposition,
      request,
      versionInfo: request.versionInfo,
      resourceNames: names,
    });
  }
}
