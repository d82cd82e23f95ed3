// State-of-the-world ADS: each request lists every subscribed name of its type, with the last accepted version and
// the nonce of the last response; a response lists the whole state of its type (LDS and CDS: an omitted cached
// resource is deleted). What the protocols share is in ads-call.ts and decoded-response.ts.
import { create } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type AdsCall, type Answer, type CallHost, createCallCore, protocolCall, responseType } from "./ads-call.js";
import { addResource, addResourceErrors, type DecodeMemo, emptyResponse, unwrapAny } from "./decoded-response.js";
import type { ResourceState } from "./resource-state.js";
import type { XdsStream } from "./transport.js";

/** What a channel keeps across its SotW calls: the last accepted version and the decode memo of each type. */
export interface SotwMemory {
  readonly versions: Map<string, string>;
  /** Undefined when the skip is off (tests compare the two). */
  memo(typeUrl: string): DecodeMemo | undefined;
}

export function createSotwCall(
  host: CallHost,
  stream: XdsStream<DiscoveryRequest, DiscoveryResponse>,
  memory: SotwMemory,
): AdsCall {
  // A new stream starts with the last accepted versions and empty nonces.
  const nonces = new Map<string, string>();
  const core = createCallCore(host, stream, decode, "ADS call");

  function decode(response: DiscoveryResponse) {
    const typeUrl = response.typeUrl;
    const type = responseType(host, typeUrl);
    if (!type) return undefined;
    nonces.set(typeUrl, response.nonce);
    const out = emptyResponse(typeUrl, type, response.versionInfo, response.nonce, true);
    const memo = memory.memo(typeUrl);
    const { features } = host.decode;
    response.resources.forEach((any, i) => {
      addResource(out, i, unwrapAny(any, typeUrl, features), host.decode, memo);
    });
    memo?.rotate();
    addResourceErrors(out, response.resourceErrors, features);
    return out;
  }

  function send(typeUrl: string, answer?: Answer): readonly ResourceState[] {
    if (answer) {
      // A46: the version advances when the response had no error or at least one valid resource.
      const { response } = answer;
      if (response.errors.length === 0 || response.valid > 0) memory.versions.set(typeUrl, response.version);
    }
    const nack = answer?.nack;
    const states = host.subscriptions(typeUrl);
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
      versionInfo: memory.versions.get(typeUrl) ?? "",
      typeUrl,
      responseNonce: nonces.get(typeUrl) ?? "",
      resourceNames: names,
      resourceLocators: locators,
    });
    if (nack !== undefined) request.errorDetail = nack;
    host.log.trace(
      () =>
        `ADS call #${core.id} sending ${typeUrl} v="${request.versionInfo}" nonce="${request.responseNonce}" names=${states.length}${nack === undefined ? "" : " NACK"}`,
    );
    core.send(request, states);
    return states;
  }

  return protocolCall(core, send);
}
