// The application's implementations, as its `routes` function registers them with Connect's router: the lean gRPC
// path (grpc-fast-path.ts) calls them itself. Only methods registered without per-service or per-method options are
// taken (options can change protocols, limits or interceptors for that method alone); a path registered again
// takes the later registration, as connectNodeAdapter's path map does.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type MethodImplSpec,
} from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";

/** Implementations by request path (`/package.Service/Method`); a path registered with options maps to undefined. */
export type CapturedMethods = ReadonlyMap<string, MethodImplSpec | undefined>;

function pathOf(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Wraps `routes` so that each registration is also recorded. The returned `routes` is what connectNodeAdapter gets;
 * `methods` fills when connectNodeAdapter calls it (once, at creation).
 */
export function captureRoutes(routes: (router: ConnectRouter) => void): {
  readonly routes: (router: ConnectRouter) => void;
  readonly methods: CapturedMethods;
  /** The handlers Connect made for the routes (connectNodeAdapter's own), once it called `routes`. */
  handlers(): readonly UniversalHandler[];
} {
  const methods = new Map<string, MethodImplSpec | undefined>();
  let filled: ConnectRouter | undefined;
  const record = (spec: MethodImplSpec, withOptions: boolean) => {
    methods.set(pathOf(spec.method), withOptions ? undefined : spec);
  };
  return {
    methods,
    handlers: () => filled?.handlers ?? [],
    routes(router) {
      filled = router;
      const recording: ConnectRouter = {
        get handlers() {
          return router.handlers;
        },
        service(service: DescService, implementation: never, options?: unknown) {
          router.service(service, implementation, options as never);
          const spec = createServiceImplSpec(service, implementation);
          for (const method of service.methods) {
            const implSpec = spec.methods[method.localName];
            if (implSpec !== undefined) record(implSpec, options !== undefined);
          }
          return recording;
        },
        rpc(method: DescMethod, impl: never, options?: unknown) {
          router.rpc(method as never, impl, options as never);
          record(createMethodImplSpec(method as never, impl), options !== undefined);
          return recording;
        },
      } as ConnectRouter;
      routes(recording);
    },
  };
}
