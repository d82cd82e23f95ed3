import type { Any } from "@bufbuild/protobuf/wkt";
import { type ListenerView, ListenerViewReader } from "../gen/envoy/config/listener/v3/listener_view.js";
import { HttpConnectionManagerViewReader } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_view.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";
import { decodeResource, type ResourceMessage } from "./decode-view.js";
import { decodeExtension, extractExtension } from "./extension.js";
import { HCM_TYPE, parseHttpConnectionManager } from "./http-connection-manager.js";
import type { ClientListenerUpdate, HttpFilter, ListenerUpdate, ServerListenerUpdate } from "./listener-types.js";
import { parseServerListener } from "./server-listener.js";
import type { ValidationErrors } from "./validation.js";

export type { ClientListenerUpdate, HttpFilter, ListenerRouteSource, ListenerUpdate } from "./listener-types.js";

// LDS: one type for client Listeners (an `api_listener`) and server Listeners (an `address`, A36), as in gRPC: a
// Listener with an `api_listener` is a client one (whatever else it holds, as C-core reads it), else one with an
// `address` is a server one, else it is invalid.

function parseClientListener(
  proto: ListenerView & { apiListener: NonNullable<ListenerView["apiListener"]> },
  context: DecodeContext,
  errors: ValidationErrors,
): Omit<ClientListenerUpdate, "kind" | "name" | "raw"> | undefined {
  const extension = extractExtension(proto.apiListener.apiListener, "api_listener.api_listener", errors);
  if (extension === undefined) return undefined;
  if (extension.type !== HCM_TYPE) {
    errors.add(extension.path, "unsupported filter type");
    return undefined;
  }
  const hcm = decodeExtension(extension, HttpConnectionManagerViewReader);
  if (hcm === undefined) {
    errors.add(extension.path, "could not parse HttpConnectionManager config");
    return undefined;
  }
  return parseHttpConnectionManager<HttpFilter>(hcm, extension.path, "client", context, errors);
}

const LISTENER: ResourceMessage<ListenerView> = {
  typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
  label: "Listener",
  reader: ListenerViewReader,
  nameOf: (view) => view.name,
};

/**
 * LDS: `envoy.config.listener.v3.Listener`, a client Listener (an `api_listener` holding an HttpConnectionManager) or
 * a server one (A36: an `address` and filter chains).
 */
export const listenerResourceType: ResourceType<ListenerUpdate> = Object.freeze({
  typeUrl: LISTENER.typeUrl,
  typeName: "ListenerResource",
  allResourcesRequiredInSotW: true,
  usesWrapper: false,
  decode(resource: Any, context: DecodeContext): DecodeResult<ListenerUpdate> {
    type Body = Omit<ClientListenerUpdate, "raw"> | Omit<ServerListenerUpdate, "raw">;
    return decodeResource(resource, LISTENER, (view, errors): Body | undefined => {
      if (view.apiListener !== undefined) {
        const apiListener = view.apiListener;
        const body = parseClientListener({ ...view, apiListener }, context, errors);
        return body === undefined ? undefined : { kind: "client", name: view.name, ...body };
      }
      if (view.address === undefined) {
        errors.add("", "Listener has neither address nor ApiListener");
        return undefined;
      }
      const body = parseServerListener(view, context, errors);
      return body === undefined ? undefined : { kind: "server", name: view.name, ...body };
    }) as DecodeResult<ListenerUpdate>;
  },
});
