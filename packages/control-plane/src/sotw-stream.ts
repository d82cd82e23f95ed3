import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  ResourceErrorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import type { InjectedResponse, RequestDisposition } from "./hooks.js";
import { withPreEncodedField } from "./pre-encoded.js";
import type { ResourceEntry } from "./resource-set.js";
import { InvalidRequestError, StreamBase, type StreamTypeInfo, typeInfo } from "./stream-base.js";
import { TypeSubscription } from "./subscription.js";

interface SotwTypeState {
  readonly sub: TypeSubscription;
  /** The client asked for this type (a type only injected into is not pushed to). */
  requested: boolean;
  /** The stream is in legacy wildcard mode: its first request for this LDS/CDS type named nothing. */
  legacyWildcard: boolean;
  lastNonce: string;
  lastVersion: string;
  ackedVersion: string;
  nack: Status | undefined;
}

/**
 * State of the world ADS (StreamAggregatedResources), as Envoy and go-control-plane define it:
 * - versions and nonces are tracked per type; a request whose nonce is not the latest response's of its type is
 *   stale and ignored entirely (its subscription changes too: the client repeats them when it ACKs);
 * - the server remembers what it sent, so a NACK never brings the same version again;
 * - full-state types (LDS, CDS) carry every subscribed resource that exists whenever anything about them changes;
 *   other types carry only the resources that changed or were newly subscribed;
 * - an LDS/CDS first request naming nothing, or any request naming `*`, subscribes to every resource of the type.
 */
export class SotwStream extends StreamBase<DiscoveryRequest, DiscoveryResponse> {
  readonly #types = new Map<string, SotwTypeState>();

  requestedTypes(): Iterable<string> {
    return this.#types.keys();
  }

  protected typeInfos(): StreamTypeInfo[] {
    return [...this.#types.values()].map((state) =>
      typeInfo(
        state,
        state.ackedVersion,
        new Map([...state.sub.sent].map(([name, version]) => [name, String(version)])),
      ),
    );
  }

  protected handleRequest(request: DiscoveryRequest): void {
    const typeUrl = request.typeUrl;
    if (typeUrl === "") throw new InvalidRequestError("DiscoveryRequest without type_url");
    this.adoptNode(request.node);
    const names = [...request.resourceNames];
    for (const locator of request.resourceLocators) names.push(locator.name);
    if (names.includes("")) {
      throw new InvalidRequestError(`DiscoveryRequest for ${typeUrl} names an empty resource`);
    }

    const state = this.#types.get(typeUrl);
    let disposition: RequestDisposition;
    if (state === undefined || state.lastNonce === "") disposition = "subscribe";
    else if (request.responseNonce !== state.lastNonce) disposition = "stale";
    else disposition = request.errorDetail ? "nack" : "ack";

    if (disposition === "stale") {
      this.#report(request, names, "stale");
      return;
    }
    const typeState = state ?? this.#newState(typeUrl);
    if (disposition === "nack") {
      typeState.nack = request.errorDetail;
      this.logger.debug(`NACK of ${typeUrl} nonce ${request.responseNonce}: ${request.errorDetail?.message ?? ""}`);
    } else if (disposition === "ack") {
      typeState.ackedVersion = request.versionInfo;
      typeState.nack = undefined;
    }

    const fullState = this.host.fullStateTypeUrls.has(typeUrl);
    const star = names.includes("*");
    const firstRequest = !typeState.requested;
    typeState.requested = true;
    let wildcard: boolean;
    if (star) {
      wildcard = true;
      typeState.legacyWildcard = false;
    } else if (names.length === 0 && fullState && (firstRequest || typeState.legacyWildcard)) {
      wildcard = true;
      typeState.legacyWildcard = true;
    } else {
      wildcard = false;
      typeState.legacyWildcard = false;
    }
    typeState.sub.replaceNames(names, wildcard);
    this.#report(request, names, disposition);
    this.flushType(typeUrl);
  }

  inject(init: InjectedResponse): string {
    const response = create(DiscoveryResponseSchema, init as MessageInitShape<typeof DiscoveryResponseSchema>);
    if (response.nonce === "") response.nonce = this.nextNonce();
    if (response.typeUrl === "") throw new TypeError("injectResponse: the response needs a type_url");
    const state = this.#types.get(response.typeUrl) ?? this.#newState(response.typeUrl);
    state.lastNonce = response.nonce;
    state.lastVersion = response.versionInfo;
    this.deliver(response.typeUrl, response, {
      type: "response",
      kind: "sotw",
      streamId: this.id,
      node: this.node,
      typeUrl: response.typeUrl,
      nonce: response.nonce,
      versionInfo: response.versionInfo,
      resourceNames: [],
      errorNames: response.resourceErrors.map((e) => e.resourceName?.name ?? ""),
      response,
      delivery: "sent",
    });
    return response.nonce;
  }

  protected flushType(typeUrl: string): void {
    const state = this.#types.get(typeUrl);
    if (state === undefined || !state.requested || this.closed) return;
    const sub = state.sub;
    const entries = this.set.entries(typeUrl);
    const subscribed = sub.subscribedResources(entries);
    const errors = sub.pendingErrors(entries);
    const fullState = this.host.fullStateTypeUrls.has(typeUrl);
    let resources: ResourceEntry[];
    if (fullState) {
      const changed = subscribed.length !== sub.sent.size || subscribed.some((e) => sub.sent.get(e.name) !== e.version);
      // A wildcard client learns that there is nothing from an empty first response.
      const firstWildcard = sub.wildcard && state.lastNonce === "";
      if (!changed && errors.length === 0 && !firstWildcard) return;
      resources = subscribed;
      sub.sent.clear();
    } else {
      resources = subscribed.filter((e) => sub.sent.get(e.name) !== e.version);
      if (resources.length === 0 && errors.length === 0) return;
    }
    sub.markSent(resources);
    sub.markErrorsSent(errors);

    const nonce = this.nextNonce();
    const versionInfo = this.set.typeVersion(typeUrl) || "0";
    state.lastNonce = nonce;
    state.lastVersion = versionInfo;
    const anys = resources.map((entry) => this.anyFor(entry));
    const response = create(DiscoveryResponseSchema, {
      versionInfo,
      typeUrl,
      nonce,
      resources: anys,
      resourceErrors: errors.map((e) =>
        create(ResourceErrorSchema, { resourceName: { name: e.name }, errorDetail: e.status }),
      ),
      ...(this.host.controlPlane ? { controlPlane: this.host.controlPlane } : {}),
    });
    this.logger.trace(`response ${typeUrl} version ${versionInfo} nonce ${nonce}: ${resources.length} resources`);
    const wire = withPreEncodedField({ ...response, resources: [] }, 2, anys);
    this.deliver(typeUrl, wire, {
      type: "response",
      kind: "sotw",
      streamId: this.id,
      node: this.node,
      typeUrl,
      nonce,
      versionInfo,
      resourceNames: resources.map((e) => e.name),
      errorNames: errors.map((e) => e.name),
      response,
      delivery: "sent",
    });
  }

  #newState(typeUrl: string): SotwTypeState {
    const state: SotwTypeState = {
      sub: new TypeSubscription(typeUrl),
      requested: false,
      legacyWildcard: false,
      lastNonce: "",
      lastVersion: "",
      ackedVersion: "",
      nack: undefined,
    };
    this.#types.set(typeUrl, state);
    return state;
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
