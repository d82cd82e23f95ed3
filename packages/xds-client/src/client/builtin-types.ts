// The four built-in resource types as the package exports them. Each is a small object holding the type's names;
// its decoder, and the envoy message descriptors the decoder needs, are loaded (lazy-module.ts) when the client
// first needs it (`decoderLoading`, which the client awaits before decoding a response), or at once when `decode`
// is called before that.
import type { Any } from "@bufbuild/protobuf/wkt";
import type * as ClusterModule from "../resources/cluster.js";
import type { ClusterResourceTypeOptions, ClusterUpdate } from "../resources/cluster-types.js";
import type * as EndpointModule from "../resources/endpoint.js";
import type { EndpointUpdate } from "../resources/endpoint-types.js";
import type * as ListenerModule from "../resources/listener.js";
import type { ListenerUpdate } from "../resources/listener.js";
import type * as RouteModule from "../resources/route-configuration.js";
import type { RouteConfigurationUpdate } from "../resources/route-types.js";
import { loadModule, loadOnce, requireModule } from "../shared/lazy-module.js";
import { errorMessage } from "../shared/xds-error.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";

/** How to get a lazy type's real `ResourceType`: asynchronously (once, retried after a failure), or now. */
interface Decoder<T> {
  readonly load: () => Promise<void>;
  readonly loadNow: () => ResourceType<T>;
  real: ResourceType<T> | undefined;
}

const decoders = new WeakMap<ResourceType<unknown>, Decoder<unknown>>();

type Names = Pick<ResourceType<unknown>, "typeUrl" | "typeName" | "allResourcesRequiredInSotW" | "usesWrapper">;

/**
 * A resource type with these names whose real type comes from `load` (or `loadNow`, when `decode` is called before
 * `load` settled). Internal: the built-in types, and tests.
 */
export function lazyResourceType<T>(
  names: Names,
  load: () => Promise<ResourceType<T>>,
  loadNow: () => ResourceType<T>,
): ResourceType<T> {
  const decoder: Decoder<T> = {
    load: loadOnce(() =>
      load().then((real) => {
        decoder.real ??= real;
      }),
    ),
    loadNow,
    real: undefined,
  };
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

/** A module of a built-in type: its path, and `import()` of that path (written out, for bundlers to follow). */
interface ModuleRef<M> {
  readonly path: string;
  readonly importer: () => Promise<M>;
}

/** A built-in type: `pick` finds it in `module`. */
function builtin<T, M>(names: Names, module: ModuleRef<M>, pick: (module: M) => ResourceType<T>): ResourceType<T> {
  return lazyResourceType(
    names,
    () => loadModule(module.path, module.importer).then(pick),
    () => pick(requireModule<M>(module.path)),
  );
}

/**
 * Starts loading the decoder of a lazy type, if it is not loaded yet: the promise while it loads (it rejects when the
 * load fails; the next call tries again). Undefined once loaded, and for every other type.
 */
export function decoderLoading(type: ResourceType<unknown>): Promise<void> | undefined {
  const decoder = decoders.get(type);
  if (decoder === undefined || decoder.real !== undefined) return undefined;
  return decoder.load();
}

const CLUSTER: Names = {
  typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  typeName: "ClusterResource",
  allResourcesRequiredInSotW: true,
  usesWrapper: false,
};

const CLUSTER_MODULE: ModuleRef<typeof ClusterModule> = {
  path: "../resources/cluster.js",
  importer: () => import("../resources/cluster.js"),
};

/** CDS: a ResourceType for `envoy.config.cluster.v3.Cluster` (EDS, LOGICAL_DNS or aggregate), gRPC's rules. */
export function createClusterResourceType(options: ClusterResourceTypeOptions = {}): ResourceType<ClusterUpdate> {
  return builtin(CLUSTER, CLUSTER_MODULE, (module) => module.createClusterResourceType(options));
}

/** CDS with the default options. */
export const clusterResourceType: ResourceType<ClusterUpdate> = builtin(
  CLUSTER,
  CLUSTER_MODULE,
  (module) => module.clusterResourceType,
);

/** EDS: `envoy.config.endpoint.v3.ClusterLoadAssignment`. */
export const endpointResourceType: ResourceType<EndpointUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
    typeName: "EndpointResource",
    allResourcesRequiredInSotW: false,
    usesWrapper: false,
  },
  {
    path: "../resources/endpoint.js",
    importer: (): Promise<typeof EndpointModule> => import("../resources/endpoint.js"),
  },
  (module) => module.endpointResourceType,
);

/** LDS: `envoy.config.listener.v3.Listener` (API listeners). */
export const listenerResourceType: ResourceType<ListenerUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
    typeName: "ListenerResource",
    allResourcesRequiredInSotW: true,
    usesWrapper: false,
  },
  {
    path: "../resources/listener.js",
    importer: (): Promise<typeof ListenerModule> => import("../resources/listener.js"),
  },
  (module) => module.listenerResourceType,
);

/** RDS: `envoy.config.route.v3.RouteConfiguration`. */
export const routeConfigurationResourceType: ResourceType<RouteConfigurationUpdate> = builtin(
  {
    typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    typeName: "RouteConfigurationResource",
    allResourcesRequiredInSotW: false,
    usesWrapper: false,
  },
  {
    path: "../resources/route-configuration.js",
    importer: (): Promise<typeof RouteModule> => import("../resources/route-configuration.js"),
  },
  (module) => module.routeConfigurationResourceType,
);
