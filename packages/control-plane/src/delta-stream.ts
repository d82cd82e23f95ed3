import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  ResourceErrorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import type { InjectedResponse, RequestDisposition } from "./hooks.js";
import { withPreEncodedField } from "./pre-encoded.js";
import { InvalidRequestError, StreamBase, type StreamTypeInfo, typeInfo } from "./stream-base.js";
import { NOT_FOUND_SENT, parseVersion, TypeSubscription, UNKNOWN_VERSION } from "./subscription.js";

interface DeltaTypeState {
  readonly sub: TypeSubscription;
  lastNonce: string;
  lastVersion: string;
  ackedNonce: string;
  nack: Status | undefined;
}

/**
 * Incremental ADS (DeltaAggregatedResources). Requests change the subscription incrementally, so none is ignored;
 * nonces only say which response a request ACKs or NACKs. Responses carry the resources that changed (wrapped in
 * `Resource` with name and version), `removed_resources` for resources the client holds that are gone and for
 * names subscribed by name that do not exist, and TP3 `resource_errors`.
 */
export class DeltaStream extends StreamBase<DeltaDiscoveryRequest, DeltaDiscoveryResponse> {
  readonly #types = new Map<string, DeltaTypeState>();

  #state(typeUrl: string): DeltaTypeState {
    let state = this.#types.get(typeUrl);
    if (state === undefined) {
      state = { sub: new TypeSubscription(typeUrl), lastNonce: "", lastVersion: "", ackedNonce: "", nack: undefined };
      this.#types.set(typeUrl, state);
    }
    return state;
  }

  requestedTypes(): Iterable<string> {
    return this.#types.keys();
  }

  protected typeInfos(): StreamTypeInfo[] {
    return [...this.#types.values()].map((state) =>
      typeInfo(
        state,
        state.ackedNonce,
        new Map(
          [...state.sub.sent]
            .filter(([, version]) => version !== NOT_FOUND_SENT)
            .map(([name, version]) => [name, version === UNKNOWN_VERSION ? "?" : String(version)]),
        ),
      ),
    );
  }

  protected handleRequest(request: DeltaDiscoveryRequest): void {
    const typeUrl = request.typeUrl;
    if (typeUrl === "") throw new InvalidRequestError("DeltaDiscoveryRequest without type_url");
    this.adoptNode(request.node);
    const subscribe = [...request.resourceNamesSubscribe, ...request.resourceLocatorsSubscribe.map((l) => l.name)];
    const unsubscribe = [
      ...request.resourceNamesUnsubscribe,
      ...request.resourceLocatorsUnsubscribe.map((l) => l.name),
    ];
    if ([...subscribe, ...unsubscribe].some((name) => name === "")) {
      throw new InvalidRequestError(`DeltaDiscoveryRequest for ${typeUrl} names an empty resource`);
    }

    const firstRequest = !this.#types.has(typeUrl);
    const state = this.#state(typeUrl);
    let disposition: RequestDisposition;
    if (request.responseNonce === "") disposition = "subscribe";
    else if (request.errorDetail) disposition = "nack";
    else disposition = "ack";
    if (disposition === "nack") state.nack = request.errorDetail;
    else if (disposition === "ack") {
      state.ackedNonce = request.responseNonce;
      state.nack = undefined;
    }

    const sub = state.sub;
    if (firstRequest) {
      for (const [name, version] of Object.entries(request.initialResourceVersions)) {
        sub.sent.set(name, parseVersion(version));
      }
      if (subscribe.length === 0 && this.host.fullStateTypeUrls.has(typeUrl)) sub.wildcard = true;
    }
    for (const name of subscribe) {
      if (name === "*") sub.wildcard = true;
      else sub.names.add(name);
    }
    for (const name of unsubscribe) {
      if (name === "*") sub.wildcard = false;
      else sub.names.delete(name);
    }
    sub.prune();

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
    this.flushType(typeUrl);
  }

  inject(init: InjectedResponse): string {
    const response = create(
      DeltaDiscoveryResponseSchema,
      init as MessageInitShape<typeof DeltaDiscoveryResponseSchema>,
    );
    if (response.nonce === "") response.nonce = this.nextNonce();
    if (response.typeUrl === "") throw new TypeError("injectResponse: the response needs a type_url");
    const state = this.#state(response.typeUrl);
    state.lastNonce = response.nonce;
    state.lastVersion = response.systemVersionInfo;
    this.deliver(response.typeUrl, response, {
      type: "response",
      kind: "delta",
      streamId: this.id,
      node: this.node,
      typeUrl: response.typeUrl,
      nonce: response.nonce,
      versionInfo: response.systemVersionInfo,
      resourceNames: response.resources.map((r) => r.name),
      errorNames: response.resourceErrors.map((e) => e.resourceName?.name ?? ""),
      removedNames: response.removedResources,
      response,
      delivery: "sent",
    });
    return response.nonce;
  }

  protected flushType(typeUrl: string): void {
    const state = this.#types.get(typeUrl);
    if (state === undefined || this.closed) return;
    const sub = state.sub;
    const entries = this.set.entries(typeUrl);
    const changed = sub.subscribedResources(entries).filter((e) => sub.sent.get(e.name) !== e.version);
    const errors = sub.pendingErrors(entries);
    const removed: string[] = [];
    for (const [name, version] of sub.sent) {
      if (version !== NOT_FOUND_SENT && entries?.get(name) === undefined) removed.push(name);
    }
    for (const name of sub.names) {
      if (!sub.sent.has(name) && entries?.get(name) === undefined) removed.push(name);
    }
    if (changed.length === 0 && errors.length === 0 && removed.length === 0) return;
    sub.markSent(changed);
    sub.markErrorsSent(errors);
    for (const name of removed) {
      if (sub.names.has(name)) sub.sent.set(name, NOT_FOUND_SENT);
      else sub.sent.delete(name);
    }

    const nonce = this.nextNonce();
    const versionInfo = this.set.typeVersion(typeUrl) || "0";
    state.lastNonce = nonce;
    state.lastVersion = versionInfo;
    const wrapped = changed.map((entry) => this.resourceFor(entry));
    const response = create(DeltaDiscoveryResponseSchema, {
      systemVersionInfo: versionInfo,
      typeUrl,
      nonce,
      resources: wrapped,
      removedResources: removed,
      resourceErrors: errors.map((e) =>
        create(ResourceErrorSchema, { resourceName: { name: e.name }, errorDetail: e.status }),
      ),
      ...(this.host.controlPlane ? { controlPlane: this.host.controlPlane } : {}),
    });
    this.deliver(typeUrl, withPreEncodedField({ ...response, resources: [] }, 2, wrapped), {
      type: "response",
      kind: "delta",
      streamId: this.id,
      node: this.node,
      typeUrl,
      nonce,
      versionInfo,
      resourceNames: changed.map((e) => e.name),
      errorNames: errors.map((e) => e.name),
      removedNames: removed,
      response,
      delivery: "sent",
    });
  }
}
