// The four built-in resource types as the package exports them. Each is a small object holding the type's names;
// its decoder, and the envoy message descriptors the decoder needs, are loaded (lazy-module.ts) when the client
// first needs it (`decoderLoading`, which the client awaits before decoding a response), or at once when `decode`
// is called before that.
import type { Any } from "@bufbuild/protobuf/wkt";
import { loadModule, requireModule } from "./lazy-module.js";
import type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";
import type * as ClusterModule from "./resources/cluster.js";
import type { ClusterResourceTypeOptions, ClusterUpdate } from "./resources/cluster.js";
import type * as EndpointModule from "./resources/endpoint.js";
import type { EndpointUpdate } from "./resources/endpoint.js";
import type * as ListenerModule from "./resources/listener.js";
import type { ListenerUpdate } from "./resources/listener.js";
import type * as RouteModule from "./resources/route-configuration.js";
import type { RouteConfigurationUpdate } from "./resources/route-configuration.js";
import { errorMessage } from "./xds-error.js";

/** How to get a lazy type's real `ResourceType`: asynchronously, or now. */
interface Decoder<T> {
  readonly load: () => Promise<ResourceType<T>>;
  readonly loadNow: () => ResourceType<T>;
  real: ResourceType<T> | undefined;
  loading: Promise<void> | undefined;
}

const decoders = new WeakMap<ResourceType<unknown>, Decoder<unknown>>();

type Names = Pick<ResourceType<unknown>, "typeUrl" | "typeName" | "allResourcesRequiredInSotW">;

/**
 * A resource type with these names whose real type comes from `load` (or `loadNow`, when `decode` is called before
 * `load` settled). Internal: the built-in types, and tests.
 */
export function lazyResourceType<T>(
  names: Names,
  load: () => Promise<ResourceType<T>>,
  loadNow: () => ResourceType<T>,
): ResourceType<T> {
  const decoder: Decoder<T> = { load, loadNow, real: undefined, loading: undefined };
  const type: ResourceType<T> = Object.freeze({
    ...names,
    decode(resource: Any, context: DecodeContext): DecodeResult<T> {
      if (decoder.real === undefined) {
        try {
          decoder.real = decoder.loadNow();
        } catch (error) {
          // Decoders never throw (resource-type.ts).
          return { ok: false, error: `the ${names.typeName} decoder could not be loaded: ${errorMessage(error)}` };
        }
      }
      return decoder.real.decode(resource, context);
    },
  });
  decoders.set(type as ResourceType<unknown>, decoder as Decoder<unknown>);
  return type;
}

/** A built-in type: `pick` finds it in the module at `path` (`importer` imports that path). */
function builtin<T, M>(
  names: Names,
  path: string,
  importer: () => Promise<M>,
  pick: (module: M) => ResourceType<T>,
): ResourceType<T> {
  return lazyResourceType(
    names,
    () => loadModule(path, importer).then(pick),
    () => pick(requireModule<M>(path)),
  );
}

/**
 * Starts loading the decoder of a lazy type, if it is not loaded yet: the promise is set while it loads (it
 * rejects when the load fails; the next call tries again). Undefined once loaded, and for every other type.
 */
export function decoderLoading(type: ResourceType<unknown>): Promise<void> | undefined {
  const decoder = decoders.get(type);
  if (decoder === undefined || decoder.real !== undefined) return undefined;
  decoder.loading ??= decoder.load().then(
    (real) => {
      decoder.real ??= real;
      decoder.loading = undefined;
    },
    (error: unknown) => {
      decoder.loading = undefined;
      throw error;
    },
  );
  return decoder.loading;
}

const CLUSTER: Names = {
  typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  typeName: "ClusterResource",
  allResourcesRequiredInSotW: true,
};

/** CDS: a ResourceType for `envoy.config.cluster.v3.Cluster` (EDS, LOGICAL_DNS or aggregate), gRPC's rules. */
export function createClusterResourceType(options: ClusterResourceTypeOptions = {}): ResourceType<ClusterUpdate> {
  return builtin(
    CLUSTER,
    "./resources/cluster.js",
    (): Promise<typeof ClusterModule> => import("./resources/cluster.js"),
    (module) => module.createClusterResourceType(options),
  );
}

/** CDS with the default options. */
export const clusterResourceType: ResourceType<ClusterUpdate> = builtin(
  CLUSTER,
  "./resources/cluster.js",
  (): Promise<typeof ClusterModule> => import("./resources/cluster.js"),
  (module) => module.clusterResourceType,
);

/** EDS: `envoy.config.endpoint.v3.ClusterLoadAssignment`. */
export const endpointResourceType: ResourceType<EndpointUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
    typeName: "EndpointResource",
    allResourcesRequiredInSotW: false,
  },
  "./resources/endpoint.js",
  (): Promise<typeof EndpointModule> => import("./resources/endpoint.js"),
  (module) => module.endpointResourceType,
);

/** LDS: `envoy.config.listener.v3.Listener` (API listeners). */
export const listenerResourceType: ResourceType<ListenerUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
    typeName: "ListenerResource",
    allResourcesRequiredInSotW: true,
  },
  "./resources/listener.js",
  (): Promise<typeof ListenerModule> => import("./resources/listener.js"),
  (module) => module.listenerResourceType,
);

/** RDS: `envoy.config.route.v3.RouteConfiguration`. */
export const routeConfigurationResourceType: ResourceType<RouteConfigurationUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    typeName: "RouteConfigurationResource",
    allResourcesRequiredInSotW: false,
  },
  "./resources/route-configuration.js",
  (): Promise<typeof RouteModule> => import("./resources/route-configuration.js"),
  (module) => module.routeConfigurationResourceType,
);
