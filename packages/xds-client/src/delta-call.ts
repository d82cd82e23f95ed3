// Incremental (delta) ADS: requests carry subscription changes; a new stream resubscribes everything with the
// versions of cached resources; responses carry changed resources, each with its own version, and explicit
// removals (`removed_resources`, and `removed_resource_names` for variants sent with constraints).
import { create } from "@bufbuild/protobuf";
import { TRUE } from "@xdskit/constraint-matcher";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  ResourceLocatorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import {
  type AdsCall,
  adsCall,
  type CallHost,
  nackStatus,
  newCallId,
  responseType,
  sendAndArmTimers,
  subscriptionsOf,
} from "./ads-call.js";
import { type Decoded, nackDetail, safeDecode } from "./cache-updates.js";
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
  const id = newCallId();
  /** What the server was told it is subscribed to, per type, on this stream. */
  const sent = new Map<string, Map<string, Sent>>();
  let sentNode = false;
  let cancelled = false;

  function send(typeUrl: string, ack?: { nonce: string; errorDetail?: string }): void {
    const states = subscriptionsOf(host, typeUrl);
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
    for (const [key, entry] of before) {
      if (now.has(key)) continue;
      if (Object.keys(entry.parameters).length === 0) request.resourceNamesUnsubscribe.push(entry.name);
      else
        request.resourceLocatorsUnsubscribe.push(
          create(ResourceLocatorSchema, { name: entry.name, dynamicParameters: { ...entry.parameters } }),
        );
    }
    sent.set(typeUrl, now);
    const changed =
      request.resourceNamesSubscribe.length +
        request.resourceLocatorsSubscribe.length +
        request.resourceNamesUnsubscribe.length +
        request.resourceLocatorsUnsubscribe.length >
      0;
    if (!first && !changed && ack === undefined) return;
    if (!sentNode) {
      request.node = host.context.node;
      sentNode = true;
    }
    if (ack?.errorDetail !== undefined) request.errorDetail = nackStatus(ack.errorDetail);
    host.log.trace(
      () =>
        `delta ADS call #${id} sending ${typeUrl} +${added.length} -${request.resourceNamesUnsubscribe.length + request.resourceLocatorsUnsubscribe.length} nonce="${request.responseNonce}"`,
    );
    sendAndArmTimers(host, stream, request, added, () => !cancelled);
  }

  function apply(response: DeltaDiscoveryResponse): void {
    const typeUrl = response.typeUrl;
    const type = responseType(host, typeUrl);
    if (!type) return;
    const { updater } = host;
    const version = response.systemVersionInfo;
    const errors: string[] = [];
    const decoded: Decoded[] = [];
    let valid = 0;
    let invalid = 0;
    response.resources.forEach((resource, i) => {
      const unwrapped = updater.unwrapResource(resource, typeUrl);
      if ("error" in unwrapped) {
        errors.push(`resources[${i}]: ${unwrapped.error}`);
        invalid += 1;
        return;
      }
      const result = safeDecode(type, unwrapped.any, updater.decodeContext);
      const name = unwrapped.name ?? result.name;
      if (result.ok) valid += 1;
      else {
        invalid += 1;
        errors.push(
          name === undefined ? `resources[${i}]: ${result.error}` : `resources[${i}]: ${name}: ${result.error}`,
        );
      }
      if (name !== undefined) {
        decoded.push({
          name: canonicalName(name),
          constraints: unwrapped.constraints,
          result,
          any: unwrapped.any,
          version: resource.version,
        });
      }
    });
    updater.applyDecoded(host.authorities, typeUrl, decoded, version);
    for (const name of response.removedResources) {
      for (const state of updater.statesFor(host.authorities, typeUrl, canonicalName(name), TRUE))
        updater.deleted(state, version);
    }
    response.removedResourceNames.forEach((removed, i) => {
      try {
        const constraints = updater.readConstraints(removed.dynamicParameterConstraints);
        for (const state of updater.statesFor(host.authorities, typeUrl, canonicalName(removed.name), constraints))
          updater.deleted(state, version);
      } catch (error) {
        errors.push(`removed_resource_names[${i}]: ${removed.name}: ${(error as Error).message}`);
      }
    });
    invalid += updater.applyResourceErrors(
      host.authorities,
      typeUrl,
      response.resourceErrors,
      version,
      errors,
      new Set(),
    );
    updater.countUpdates(typeUrl, valid, invalid);
    if (errors.length === 0) send(typeUrl, { nonce: response.nonce });
    else {
      const detail = nackDetail(errors, host.context.bootstrap.node.id);
      host.log.warn(() => `NACK ${typeUrl} nonce ${response.nonce}: ${detail}`);
      send(typeUrl, { nonce: response.nonce, errorDetail: detail });
    }
  }

  return adsCall(
    id,
    stream,
    (typeUrl) => send(typeUrl),
    apply,
    () => {
      cancelled = true;
    },
  );
}
