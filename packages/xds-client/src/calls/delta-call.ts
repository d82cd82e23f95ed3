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
  type Resource,
  ResourceLocatorSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DeltaResponseBytes } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import { canonicalName } from "../shared/resource-name.js";
import type { ResourceState } from "../state/resource-state.js";
import type { DeltaResponseRanges, XdsStream } from "../transport/transport-types.js";
import { expectTypeUrls } from "../wire/any-reader.js";
import { emptyResponse, UNCONSTRAINED } from "../wire/decoded-response.js";
import { addDeltaEntries, type ReadDeltaEntries, readDeltaEntries } from "../wire/delta-entries.js";
import { readResource } from "../wire/delta-resource.js";
import { addOutcome, outcomeOf } from "../wire/entry-outcome.js";
import { addResourceErrors } from "../wire/resource-errors.js";
import { readVariantRef, unwrapResource } from "../wire/resource-unwrap.js";
import { type AdsCall, type Answer, type CallHost, createCallCore, protocolCall, responseType } from "./ads-call.js";

/** A subscription the server was told of on this stream. */
interface Sent {
  readonly parameters: Readonly<Record<string, string>>;
  /** The last request pass that found it still subscribed. */
  pass: number;
}

/** Per type: by name, then by parameters key. */
type SentOfType = Map<string, Map<string, Sent>>;

export function createDeltaCall(
  host: CallHost,
  stream: XdsStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse | DeltaResponseBytes | DeltaResponseRanges>,
): AdsCall {
  /** What the server was told it is subscribed to, per type, on this stream, and how many subscriptions that is. */
  const sent = new Map<string, { readonly byName: SentOfType; count: number }>();
  let pass = 0;
  const core = createCallCore(host, stream, decode, "delta ADS call");

  function decode(response: DeltaDiscoveryResponse | DeltaResponseBytes | DeltaResponseRanges) {
    const typeUrl = response.typeUrl;
    // The default transport keeps each resource as the bytes it arrived as; another may hand decoded Resources.
    // Every entry is read (an unreadable one fails the stream, whatever the type) before anything is decoded.
    let ranges: ReadDeltaEntries | undefined;
    let resources: readonly Resource[] = [];
    if (response.$typeName === "xdskit.client.v1.DeltaResponseRanges") {
      ranges = readDeltaEntries(response.entries, expectTypeUrls(typeUrl));
    } else if (response.$typeName === "xdskit.client.v1.DeltaResponseBytes") {
      const expected = expectTypeUrls(typeUrl);
      resources = response.resources.map((bytes) => readResource(bytes, expected));
    } else {
      resources = response.resources;
    }
    const type = responseType(host, typeUrl);
    if (!type) return undefined;
    const out = emptyResponse(typeUrl, type, response.systemVersionInfo, response.nonce, false);
    const { features } = host.decode;
    if (ranges !== undefined) addDeltaEntries(out, ranges, host.decode);
    for (let i = 0; i < resources.length; i++) {
      const resource = resources[i]!;
      addOutcome(out, i, outcomeOf(type, unwrapResource(resource, typeUrl, features), host.decode, resource.version));
    }
    for (const name of response.removedResources) {
      out.removals.push({ name: canonicalName(name), constraints: TRUE, variant: UNCONSTRAINED });
    }
    // A response read as ranges has neither (the plain reader leaves one that has them to protobuf-es).
    if (response.$typeName === "xdskit.client.v1.DeltaResponseRanges") return out;
    response.removedResourceNames.forEach((removed, i) => {
      const ref = readVariantRef(removed, features);
      if ("error" in ref) out.errors.push(`removed_resource_names[${i}]: ${ref.error}`);
      else out.removals.push(ref);
    });
    addResourceErrors(out, response.resourceErrors, features);
    return out;
  }

  /**
   * A request for `typeUrl`: an ACK or NACK of `answer` alone (a subscription change since is on its way in an
   * update: the channel flushes every change), else what changed in the subscriptions since the last request, from
   * a pass of lookups over them; the subscriptions it no longer has are looked for only when some are gone.
   */
  function send(typeUrl: string, answer?: Answer): readonly ResourceState[] {
    if (answer) {
      const request = create(DeltaDiscoveryRequestSchema, { typeUrl, responseNonce: answer.response.nonce });
      if (answer.nack !== undefined) request.errorDetail = answer.nack;
      host.log.trace(
        () =>
          `delta ADS call #${core.id} sending ${typeUrl} nonce="${request.responseNonce}"${answer.nack === undefined ? "" : " NACK"}`,
      );
      core.send(request, []);
      return [];
    }
    const states = host.subscriptions(typeUrl);
    let told = sent.get(typeUrl);
    const first = told === undefined;
    if (!told) {
      told = { byName: new Map(), count: 0 };
      sent.set(typeUrl, told);
    }
    const current = ++pass;
    const added: ResourceState[] = [];
    const request = create(DeltaDiscoveryRequestSchema, { typeUrl });
    let kept = 0;
    for (const state of states) {
      let byParameters = told.byName.get(state.name);
      const known = byParameters?.get(state.parametersKey);
      if (known) {
        // Counted once: a list may hold one name twice (two authorities of one server).
        if (known.pass !== current) {
          known.pass = current;
          kept++;
        }
        continue;
      }
      if (!byParameters) {
        byParameters = new Map();
        told.byName.set(state.name, byParameters);
      }
      byParameters.set(state.parametersKey, { parameters: state.parameters, pass: current });
      added.push(state);
      if (state.parametersKey === "") request.resourceNamesSubscribe.push(state.name);
      else
        request.resourceLocatorsSubscribe.push(
          create(ResourceLocatorSchema, { name: state.name, dynamicParameters: { ...state.parameters } }),
        );
      // initial_resource_versions names resources, not variants: it stands for subscriptions by name only
      // (docs/decisions.md#serving-variants); a subscription with parameters is sent its variant again.
      if (first && state.resource !== undefined && state.parametersKey === "") {
        request.initialResourceVersions[state.name] = state.resource.version;
      }
    }
    if (first) {
      // What wildcards hold stands in the list too (by name: resources, not variants), so that a resource removed
      // while the client was away is removed now (docs/decisions.md#wildcard-watches).
      for (const [name, version] of host.coveredVersions(typeUrl)) request.initialResourceVersions[name] ??= version;
    }
    const removed = told.count - kept;
    if (removed > 0) {
      for (const [name, byParameters] of told.byName) {
        for (const [key, entry] of byParameters) {
          if (entry.pass === current) continue;
          byParameters.delete(key);
          if (key === "") request.resourceNamesUnsubscribe.push(name);
          else
            request.resourceLocatorsUnsubscribe.push(
              create(ResourceLocatorSchema, { name, dynamicParameters: { ...entry.parameters } }),
            );
        }
        if (byParameters.size === 0) told.byName.delete(name);
      }
    }
    told.count = kept + added.length;
    if (first || added.length + removed > 0) {
      host.log.trace(() => `delta ADS call #${core.id} sending ${typeUrl} +${added.length} -${removed}`);
      core.send(request, added);
    }
    return states;
  }

  return protocolCall(core, send);
}
