// The client's cache as CSDS `ClientConfig` (A40, A88): one GenericXdsConfig per subscription. A subscription with
// TP2 dynamic parameters is named with them, and the variant it holds is reported as received, in its `Resource`
// wrapper (docs/decisions.md#variants-in-csds-and-metrics).
import { create } from "@bufbuild/protobuf";
import { anyPack, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ClientResourceStatus, UpdateFailureStateSchema } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import {
  type ClientConfig,
  ClientConfig_GenericXdsConfigSchema,
  ClientConfigSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { type CacheState, parametersText, type ResourceState } from "../state/resource-state.js";
import { anyOfText } from "../wire/resource-bytes.js";

const clientStatusOf: Record<CacheState, ClientResourceStatus> = {
  requested: ClientResourceStatus.REQUESTED,
  does_not_exist: ClientResourceStatus.DOES_NOT_EXIST,
  acked: ClientResourceStatus.ACKED,
  nacked: ClientResourceStatus.NACKED,
  received_error: ClientResourceStatus.RECEIVED_ERROR,
  timeout: ClientResourceStatus.TIMEOUT,
};

/** The CSDS name of a subscription: its resource name, then its dynamic parameters, if any, in braces. */
export function csdsName(state: ResourceState): string {
  return state.parametersKey === "" ? state.name : `${state.name}{${parametersText(state.parameters)}}`;
}

export function dumpClientConfig(node: Node, states: Iterable<ResourceState>, clientScope: string): ClientConfig {
  const configs = [];
  for (const state of states) {
    const config = create(ClientConfig_GenericXdsConfigSchema, {
      typeUrl: state.typeUrl,
      name: csdsName(state),
      clientStatus: clientStatusOf[state.state],
    });
    const cached = state.resource;
    if (cached) {
      config.versionInfo = cached.version;
      const resourceName = cached.variant.resourceName;
      const any = anyOfText(state.typeUrl, cached.bytes);
      config.xdsConfig = resourceName
        ? anyPack(ResourceSchema, create(ResourceSchema, { resourceName, version: cached.version, resource: any }))
        : any;
      config.lastUpdated = timestampFromMs(cached.lastUpdated);
    }
    const failure = state.errorState;
    if (failure) {
      config.errorState = create(UpdateFailureStateSchema, {
        details: failure.details,
        versionInfo: failure.version ?? "",
        ...(failure.time === undefined ? {} : { lastUpdateAttempt: timestampFromMs(failure.time) }),
        ...(failure.failedConfiguration === undefined ? {} : { failedConfiguration: failure.failedConfiguration }),
      });
    }
    configs.push(config);
  }
  return create(ClientConfigSchema, { node, genericXdsConfigs: configs, clientScope });
}
