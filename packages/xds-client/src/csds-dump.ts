// The client's cache as CSDS `ClientConfig` (A40, A88): one GenericXdsConfig per subscribed resource.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ClientResourceStatus, UpdateFailureStateSchema } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  type ClientConfig,
  ClientConfig_GenericXdsConfigSchema,
  ClientConfigSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { type AuthorityState, statesOfType } from "./authority.js";
import type { CacheState } from "./resource-state.js";

const clientStatusOf: Record<CacheState, ClientResourceStatus> = {
  requested: ClientResourceStatus.REQUESTED,
  does_not_exist: ClientResourceStatus.DOES_NOT_EXIST,
  acked: ClientResourceStatus.ACKED,
  nacked: ClientResourceStatus.NACKED,
  received_error: ClientResourceStatus.RECEIVED_ERROR,
  timeout: ClientResourceStatus.TIMEOUT,
};

export function dumpClientConfig(node: Node, authorities: Iterable<AuthorityState>, clientScope: string): ClientConfig {
  const configs = [];
  for (const authority of authorities) {
    for (const typeUrl of authority.resources.keys()) {
      for (const state of statesOfType(authority, typeUrl)) {
        const config = create(ClientConfig_GenericXdsConfigSchema, {
          typeUrl,
          name: state.name,
          clientStatus: clientStatusOf[state.state],
        });
        const cached = state.resource;
        if (cached) {
          config.versionInfo = cached.version;
          config.xdsConfig = cached.any;
          config.lastUpdated = timestampFromMs(cached.lastUpdated);
        }
        const failure = state.errorState;
        if (failure) {
          config.errorState = create(UpdateFailureStateSchema, {
            details: failure.details,
            versionInfo: failure.version ?? "",
            lastUpdateAttempt: timestampFromMs(failure.time),
            ...(failure.failedConfiguration === undefined ? {} : { failedConfiguration: failure.failedConfiguration }),
          });
        }
        configs.push(config);
      }
    }
  }
  return create(ClientConfigSchema, { node, genericXdsConfigs: configs, clientScope });
}
