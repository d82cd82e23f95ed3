// State-of-the-world ADS: each request lists every subscribed name of its type, with the last accepted version and
// the nonce of the last response; a response lists the whole state of its type (LDS and CDS: an omitted cached
// resource is deleted). What the protocols share is in ads-call.ts and decoded-response.ts.
import { create, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { SotwResponseBytes } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import type { ResourceState } from "../state/resource-state.js";
import type { SotwResponseRanges, XdsStream } from "../transport/transport-types.js";
import { expectTypeUrls, readAnyIn } from "../wire/any-reader.js";
import { type DecodeMemo, entriesOfViews } from "../wire/decode-memo.js";
import { emptyResponse } from "../wire/decoded-response.js";
import { addOutcome, type EntryOutcome, outcomeOf } from "../wire/entry-outcome.js";
import { addResourceErrors } from "../wire/resource-errors.js";
import { RESOURCE_WRAPPER_TYPE_URL, unwrapAny } from "../wire/resource-unwrap.js";
import { type AdsCall, type Answer, type CallHost, createCallCore, protocolCall, responseType } from "./ads-call.js";

/** What a channel keeps across its SotW calls: the last accepted version and the decode memo of each type. */
export interface SotwMemory {
  readonly versions: Map<string, string>;
  /** Undefined when the skip is off (tests compare the two). */
  memo(typeUrl: string): DecodeMemo | undefined;
}

/** What a SotW request lists for its subscriptions: each plain name once, and each subscription with parameters. */
export interface RequestedNames {
  readonly names: readonly string[];
  readonly locators: readonly { readonly name: string; readonly dynamicParameters: Readonly<Record<string, string>> }[];
}

export function requestedNames(states: readonly ResourceState[]): RequestedNames {
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
  // Frozen: a request keeps the array it is given, and later requests may be given the same one.
  return { names: Object.freeze(names), locators: Object.freeze(locators) };
}

/**
 * `requestedNames`, worked out again only when the subscriptions are not the same entries in the same order as last
 * time (an entry's name and parameters never change): an ACK in a steady state reuses the lists of the request before.
 */
export function createNamesCache(): (states: readonly ResourceState[]) => RequestedNames {
  let last: readonly ResourceState[] = [];
  let lists: RequestedNames | undefined;
  return (states) => {
    if (
      lists === undefined ||
      (states !== last && (states.length !== last.length || states.some((state, i) => state !== last[i])))
    ) {
      lists = requestedNames(states);
    }
    last = states;
    return lists;
  };
}

export function createSotwCall(
  host: CallHost,
  stream: XdsStream<DiscoveryRequest, DiscoveryResponse | SotwResponseBytes | SotwResponseRanges>,
  memory: SotwMemory,
): AdsCall {
  // A new stream starts with the last accepted versions and empty nonces.
  const nonces = new Map<string, string>();
  const namesOf = new Map<string, (states: readonly ResourceState[]) => RequestedNames>();
  const core = createCallCore(host, stream, decode, "ADS call");

  function decode(response: DiscoveryResponse | SotwResponseBytes | SotwResponseRanges) {
    const typeUrl = response.typeUrl;
    // The default transport keeps each resource as the bytes it arrived as; another may hand decoded Anys.
    const entries =
      response.$typeName === "xdskit.client.v1.SotwResponseRanges"
        ? response.entries
        : entriesOfViews(
            response.$typeName === "xdskit.client.v1.SotwResponseBytes"
              ? response.resources
              : response.resources.map((any) => toBinary(AnySchema, any)),
          );
    const { memory: bytes, starts, ends } = entries;
    const count = starts.length;
    const type = host.typeOf(typeUrl);
    if (!type) {
      // Ignored, once it is known to be readable (an unreadable one fails the stream, whatever its type).
      for (let i = 0; i < count; i++) readAnyIn(bytes, starts[i]!, ends[i]!);
      responseType(host, typeUrl);
      return undefined;
    }
    const memo = memory.memo(typeUrl);
    const { features } = host.decode;
    const out = emptyResponse(typeUrl, type, response.versionInfo, response.nonce, true);
    const expected = expectTypeUrls(typeUrl, RESOURCE_WRAPPER_TYPE_URL);
    const outcomes: EntryOutcome[] = new Array(count);
    try {
      memo?.expect(entries);
      for (let i = 0; i < count; i++) {
        const outcome =
          memo?.find(i) ??
          outcomeOf(type, unwrapAny(readAnyIn(bytes, starts[i]!, ends[i]!, expected), typeUrl, features), host.decode);
        memo?.keep(i, outcome);
        outcomes[i] = outcome;
      }
    } catch (error) {
      memo?.discard();
      throw error;
    }
    memo?.rotate();
    nonces.set(typeUrl, response.nonce);
    for (let i = 0; i < count; i++) addOutcome(out, i, outcomes[i]!);
    if (response.$typeName !== "xdskit.client.v1.SotwResponseRanges") {
      addResourceErrors(out, response.resourceErrors, features);
    }
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
    let cache = namesOf.get(typeUrl);
    if (cache === undefined) {
      cache = createNamesCache();
      namesOf.set(typeUrl, cache);
    }
    const { names, locators } = cache(states);
    const request = create(DiscoveryRequestSchema, {
      versionInfo: memory.versions.get(typeUrl) ?? "",
      typeUrl,
      responseNonce: nonces.get(typeUrl) ?? "",
      resourceNames: names as string[],
      resourceLocators: locators as RequestedNames["locators"][number][],
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
