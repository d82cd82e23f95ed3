// A78's `grpc.xds_client.resources` gauge: the cache's entries counted by authority, type, cache state and dynamic
// parameters (a wildcard is a subscription, not a resource, and is not counted).
import { type MetricLabels, metricResourceType, type XdsGaugeName, XdsMetricName } from "../observability/metrics.js";
import { parametersText, type ResourceState } from "../state/resource-state.js";
import { WildcardState } from "./wildcard-state.js";

/** Records one `resources` value per label set of `entries`. */
export function recordResourceGauges(
  entries: Iterable<ResourceState>,
  target: string,
  record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void,
): void {
  const counts = new Map<string, { labels: Record<string, string>; n: number }>();
  for (const state of entries) {
    // A wildcard is a subscription, not a resource.
    if (state instanceof WildcardState) continue;
    const cacheState = state.cacheStateLabel();
    const parameters = parametersText(state.parameters);
    const key = `${state.authority}\u0000${state.typeUrl}\u0000${cacheState}\u0000${state.parametersKey}`;
    const entry = counts.get(key);
    if (entry) entry.n += 1;
    else {
      counts.set(key, {
        labels: {
          "grpc.target": target,
          "grpc.xds.authority": state.authority,
          "grpc.xds.resource_type": metricResourceType(state.typeUrl),
          "grpc.xds.cache_state": cacheState,
          ...(parameters === "" ? {} : { "grpc.xds.dynamic_parameters": parameters }),
        },
        n: 1,
      });
    }
  }
  for (const { labels, n } of counts.values()) record(XdsMetricName.resources, n, labels);
}
