// The resource API of `ManagementServer`: the server is its own default resource set, and the door to node scopes
// and DPDS sets. Every method is the store's; nothing here holds state.

import type { DynamicParameterConstraintsMap } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import {
  buildDynamicParameterConstraintsMap,
  DEFAULT_DYNAMIC_PARAMETERS_NAME,
  type DynamicParametersInit,
} from "../resources/dynamic-parameters.js";
import type { ResourceInput, ResourceMessage, ResourceOptions } from "../resources/resource-input.js";
import type { ResourceErrorOptions, ResourceSet } from "../resources/resource-set.js";
import type { NodeScope, NodeSelector, ResourceStore } from "../resources/resource-store.js";
import type { ConstraintsInput } from "../resources/variant-group.js";
import type { StatusInit } from "../status.js";
import type { DynamicParametersOptions, ManagementServer } from "./management-server-api.js";

type ResourceApi = ResourceSet & Pick<ManagementServer, "forNode" | "setDynamicParameters" | "clearDynamicParameters">;

/** The server's resource methods, over the store its subclass creates. */
export abstract class ResourceFacade implements ResourceApi {
  abstract readonly store: ResourceStore;

  setResource(resource: ResourceMessage, options?: ResourceOptions): string {
    return this.store.defaultSet.setResource(resource, options);
  }
  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void {
    this.store.defaultSet.setResources(resources);
  }
  removeResource(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    return this.store.defaultSet.removeResource(typeUrl, name, constraints);
  }
  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void {
    this.store.defaultSet.setSnapshot(resources);
  }
  getResource(typeUrl: string, name: string, constraints?: ConstraintsInput): ResourceMessage | undefined {
    return this.store.defaultSet.getResource(typeUrl, name, constraints);
  }
  resourceNames(typeUrl: string): string[] {
    return this.store.defaultSet.resourceNames(typeUrl);
  }
  resourceVariants(typeUrl: string, name: string): string[] {
    return this.store.defaultSet.resourceVariants(typeUrl, name);
  }
  typeVersion(typeUrl: string): string {
    return this.store.defaultSet.typeVersion(typeUrl);
  }
  setResourceError(typeUrl: string, name: string, status: StatusInit | Status, options?: ResourceErrorOptions): void {
    this.store.defaultSet.setResourceError(typeUrl, name, status, options);
  }
  clearResourceError(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    return this.store.defaultSet.clearResourceError(typeUrl, name, constraints);
  }
  clear(): void {
    this.store.defaultSet.clear();
  }

  forNode(selector: NodeSelector): NodeScope {
    return this.store.addScope(selector);
  }

  setDynamicParameters(
    selector: NodeSelector,
    parameters: DynamicParametersInit | DynamicParameterConstraintsMap,
    options: DynamicParametersOptions = {},
  ): void {
    const resource =
      "$typeName" in parameters
        ? (parameters as DynamicParameterConstraintsMap)
        : buildDynamicParameterConstraintsMap(parameters);
    const name = options.name ?? DEFAULT_DYNAMIC_PARAMETERS_NAME;
    // Built before the set, so bad parameters leave everything as it was.
    this.store.dynamicParametersSet(selector).setSnapshot([{ resource, name }]);
  }

  clearDynamicParameters(selector: NodeSelector): boolean {
    return this.store.removeDynamicParametersSet(selector);
  }
}
