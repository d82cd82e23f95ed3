// State-of-the-world ADS: each request lists every subscribed name of its type, with the last accepted version and
// the nonce of the last response; LDS and CDS responses list every resource, so an omitted cached one is deleted.
import { create } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
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
import { statesOfType } from "./authority.js";
import { type Decoded, nackDetail } from "./cache-updates.js";
import { canonicalName } from "./resource-name.js";
import type { XdsStream } from "./transport.js";

export function createSotwCall(host: CallHost, stream: XdsStream<DiscoveryRequest, DiscoveryResponse>): AdsCall {
  const id = newCallId();
  // A new stream starts with the last accepted versions and empty nonces.
  const nonces = new Map<string, string>();
  let sentNode = false;
  let cancelled = false;

  function send(typeUrl: string, errorDetail?: string): void {
    const states = subscriptionsOf(host, typeUrl);
    const names: string[] = [];
    const seenNames = new Set<string>();
    const locators: { name: string; dynamicParameters: Record<string, string> }[] = [];
    for (const state of states) {
      if (state.parametersKey === "") {
        if (!seenNames.has(state.name)) {
          seenNames.add(state.name);
          names.push(state.name);
        }
      } else {
        locators.push({ name: state.name, dynamicParameters: { ...state.parameters } });
      }
    }
    const request = create(DiscoveryRequestSchema, {
      versionInfo: host.versions.get(typeUrl) ?? "",
      typeUrl,
      responseNonce: nonces.get(typeUrl) ?? "",
      resourceNames: names,
      resourceLocators: locators,
    });
    if (!sentNode) {
      request.node = host.context.node;
      sentNode = true;
    }
    if (errorDetail !== undefined) request.errorDetail = nackStatus(errorDetail);
    host.log.trace(
      () =>
        `ADS call #${id} sending ${typeUrl} v="${request.versionInfo}" nonce="${request.responseNonce}" names=${states.length}${errorDetail === undefined ? "" : " NACK"}`,
    );
    sendAndArmTimers(host, stream, request, states, () => !cancelled);
  }

  function apply(response: DiscoveryResponse): void {
    const typeUrl = response.typeUrl;
    const type = responseType(host, typeUrl);
    if (!type) return;
    nonces.set(typeUrl, response.nonce);
    const { updater } = host;
    const memo = host.memo(typeUrl);
    const errors: string[] = [];
    const seen = new Set<string>();
    const decoded: Decoded[] = [];
    const version = response.versionInfo;
    let valid = 0;
    let invalid = 0;
    response.resources.forEach((entry, i) => {
      const unwrapped = updater.unwrapSotw(entry, typeUrl);
      if ("error" in unwrapped) {
        errors.push(`resource index ${i}: ${unwrapped.error}`);
        invalid += 1;
        return;
      }
      const result = memo.decode(i, type, unwrapped.any, updater.decodeContext);
      const name = unwrapped.name ?? result.name;
      const canonical = name === undefined ? undefined : canonicalName(name);
      if (canonical !== undefined) seen.add(canonical);
      if (result.ok) valid += 1;
      else {
        invalid += 1;
        errors.push(
          name === undefined ? `resource index ${i}: ${result.error}` : `resource index ${i}: ${name}: ${result.error}`,
        );
      }
      if (canonical !== undefined) {
        decoded.push({ name: canonical, constraints: unwrapped.constraints, result, any: unwrapped.any });
      }
    });
    memo.rotate();
    updater.applyDecoded(host.authorities, typeUrl, decoded, version);
    invalid += updater.applyResourceErrors(host.authorities, typeUrl, response.resourceErrors, version, errors, seen);
    if (type.allResourcesRequiredInSotW) {
      for (const authority of host.authorities) {
        for (const state of statesOfType(authority, typeUrl)) {
          if (state.resource !== undefined && !seen.has(state.name)) updater.deleted(state, version);
        }
      }
    }
    updater.countUpdates(typeUrl, valid, invalid);
    // The version advances when the response had no error or at least one valid resource (A46).
    if (errors.length === 0 || valid > 0) host.versions.set(typeUrl, version);
    if (errors.length === 0) send(typeUrl);
    else {
      const detail = nackDetail(errors, host.context.bootstrap.node.id);
      host.log.warn(() => `NACK ${typeUrl} version ${version}: ${detail}`);
      send(typeUrl, detail);
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
