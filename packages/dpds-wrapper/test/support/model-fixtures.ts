// Resources and answers for the tests that run the wrapper over the in-memory model client.
import { type ResourceResult, type ResourceType, StatusCode, XdsError, type XdsErrorKind } from "@xdskit/xds-client";
import { DPDS_TYPE_URL, type DynamicParametersUpdate } from "../../src/index.js";
import type { Params } from "./model-client.js";

export const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
export const CDS_TYPE_NAME = "envoy.config.cluster.v3.Cluster";
export const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
export const LDS_TYPE_NAME = "envoy.config.listener.v3.Listener";
export { DPDS_TYPE_URL as DPDS };

export interface Item {
  readonly value: string;
}

function modelType(typeUrl: string): ResourceType<Item> {
  return {
    typeUrl,
    typeName: typeUrl.slice(typeUrl.lastIndexOf(".") + 1),
    allResourcesRequiredInSotW: false,
    decode: () => ({ ok: false, error: "the model client does not decode" }),
  };
}

export const clusterType = modelType(CDS);
export const listenerType = modelType(LDS);

export const describeItem = (item: Item) => item.value;

export function item(value: string, version = "1"): ResourceResult<unknown> {
  return { ok: true, version, resource: { value } };
}

export function failure(code: number, kind: XdsErrorKind): { readonly ok: false; readonly error: XdsError } {
  return { ok: false, error: new XdsError(code as StatusCode, kind, `${kind} (test)`) };
}

export const notFound = () => failure(StatusCode.NOT_FOUND, "does_not_exist");

export function dpdsUpdate(byType: Record<string, Params>, version = "1"): ResourceResult<DynamicParametersUpdate> {
  return {
    ok: true,
    version,
    resource: { parametersByType: new Map(Object.entries(byType)) },
  };
}
