// Incremental (delta) ADS: requests carry subscription changes; a new stream resubscribes everything with the
// versions of cached resources; responses carry changed resources, each with its own version, and explicit
// removals (`removed_resources`, and `removed_resource_names` for variants sent with constraints). What the
// protocols share is in ads-call.ts and decoded-response.ts.
import { create } from "@bufbuild/protobuf";
import { TRUE } from "@xdskit/constraint-matcher";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  ResourceLocatorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type AdsCall, type Answer, type CallHost, createCallCore, protocolCall, responseType } from "./ads-call.js";
import {
  addOutcome,
  addResourceErrors,
  emptyResponse,
  outcomeOf,
  readVariantRef,
  UNCONSTRAINED,
  unwrapResource,
} from "./decoded-response.js";
import { canonicalName } from "./resource-name.js";
import type { ResourceState } from "./resource-state.js";
import type { XdsStream } from "./transport.js";

interface Sent {
  readonly name: string;
  readonly parameters: Readonly<Record<string, string>>;
}

function keyOf(state: ResourceState): string {
  return `${state.name}\u0000${state.parametersKey}`;
}

export function createDeltaCall(
  host: CallHost,
  stream: XdsStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>,
): AdsCall {
  /** What the server was told it is subscribed to, per type, on this stream. */
  const sent = new Map<string, Map<string, Sent>>();
  const core = createCallCore(host, stream, decode, "delta ADS call");

  function decode(response: DeltaDiscoveryResponse) {
    const typeUrl = response.typeUrl;
    const type = responseType(host, typeUrl);
    if (!type) return undefined;
    const out = emptyResponse(typeUrl, type, response.systemVersionInfo, response.nonce, false);
    const { features } = host.decode;
    response.resources.forEach((resource, i) => {
      addOutcome(out, i, outcomeOf(type, unwrapResource(resource, typeUrl, features), host.decode, resource.version));
    });
    for (const name of response.removedResources) {
      out.removals.push({ name: canonicalName(name), constraints: TRUE, variant: UNCONSTRAINED });
    }
    response.removedResourceNames.forEach((removed, i) => {
      const ref = readVariantRef(removed, features);
      if ("error" in ref) out.errors.push(`removed_resource_names[${i}]: ${ref.error}`);
      else out.removals.push(ref);
    });
    addResourceErrors(out, response.resourceErrors, features);
    return out;
  }

  function send(typeUrl: string, answer?: Answer): readonly ResourceState[] {
    const ack = answer && { nonce: answer.response.nonce, errorDetail: answer.nack };
    const states = host.subscriptions(typeUrl);
    const first = !sent.has(typeUrl);
    const before = sent.get(typeUrl) ?? new Map<string, Sent>();
    const now = new Map<string, Sent>();
    const added: ResourceState[] = [];
    const request = create(DeltaDiscoveryRequestSchema, { typeUrl, responseNonce: ack?.nonce ?? "" });
    for (const state of states) {
      const key = keyOf(state);
      now.set(key, { name: state.name, parameters: state.parameters });
      if (before.has(key)) continue;
      added.push(state);
      if (state.parametersKey === "") request.resourceNamesSubscribe.push(state.name);
      else
        request.resourceLocatorsSubscribe.push(
          create(ResourceLocatorSchema, { name: state.name, dynamicParameters: { ...state.parameters } }),
        );
      if (first && state.resource !== undefined) request.initialResourceVersions[state.name] = state.resource.version;
    }
    let removed = 0;
    for (const [key, entry] of before) {
      if (now.has(key)) continue;
      removed += 1;
      if (Object.keys(entry.parameters).length === 0) request.resourceNamesUnsubscribe.push(entry.name);
      else
        request.resourceLocatorsUnsubscribe.push(
          create(ResourceLocatorSchema, { name: entry.name, dynamicParameters: { ...entry.parameters } }),
        );
    }
    sent.set(typeUrl, now);
    if (ack?.errorDetail !== undefined) request.errorDetail = ack.errorDetail;
    if (first || added.length + removed > 0 || ack !== undefined) {
      host.log.trace(
        () =>
          `delta ADS call #${core.id} sending ${typeUrl} +${added.length} -${removed} nonce="${request.responseNonce}"${ack?.errorDetail === undefined ? "" : " NACK"}`,
      );
      core.send(request, added);
    }
    return states;
  }

  return protocolCall(core, send);
}
