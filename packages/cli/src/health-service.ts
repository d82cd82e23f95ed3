// The gRPC health service (grpc.health.v1.Health: Check and Watch), for `xdskit serve`. Its three messages are
// described here in code rather than generated: the protos package carries the xDS family only.
import { create, createFileRegistry, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";

// grpc.health.v1: HealthCheckRequest { string service = 1; }
// HealthCheckResponse { ServingStatus status = 1; enum ServingStatus { UNKNOWN = 0; SERVING = 1; NOT_SERVING = 2;
// SERVICE_UNKNOWN = 3; } }; service Health { Check (unary); Watch (server streaming) }.
const FILE = create(FileDescriptorProtoSchema, {
  name: "grpc/health/v1/health.proto",
  package: "grpc.health.v1",
  syntax: "proto3",
  messageType: [
    { name: "HealthCheckRequest", field: [{ name: "service", jsonName: "service", number: 1, label: 1, type: 9 }] },
    {
      name: "HealthCheckResponse",
      field: [
        {
          name: "status",
          jsonName: "status",
          number: 1,
          label: 1,
          type: 14,
          typeName: ".grpc.health.v1.HealthCheckResponse.ServingStatus",
        },
      ],
      enumType: [
        {
          name: "ServingStatus",
          value: [
            { name: "UNKNOWN", number: 0 },
            { name: "SERVING", number: 1 },
            { name: "NOT_SERVING", number: 2 },
            { name: "SERVICE_UNKNOWN", number: 3 },
          ],
        },
      ],
    },
  ],
  service: [
    {
      name: "Health",
      method: [
        {
          name: "Check",
          inputType: ".grpc.health.v1.HealthCheckRequest",
          outputType: ".grpc.health.v1.HealthCheckResponse",
        },
        {
          name: "Watch",
          inputType: ".grpc.health.v1.HealthCheckRequest",
          outputType: ".grpc.health.v1.HealthCheckResponse",
          serverStreaming: true,
        },
      ],
    },
  ],
});

const registry = createFileRegistry(FILE, () => undefined);
const HealthService = registry.getService("grpc.health.v1.Health") as DescService;
const ResponseSchema = registry.getMessage("grpc.health.v1.HealthCheckResponse") as DescMessage;

export const ServingStatus = { SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

/** The services whose health is reported: the server as a whole ("") and ADS. */
export const HEALTH_SERVICES: readonly string[] = ["", "envoy.service.discovery.v3.AggregatedDiscoveryService"];

function response(status: number) {
  return create(ResponseSchema, { status } as never);
}

/**
 * Registers grpc.health.v1.Health: SERVING while `serving()` holds for "" and ADS; Check of another service is
 * NOT_FOUND, Watch of one answers SERVICE_UNKNOWN (as the health protocol asks). Watch sends the status once and
 * keeps the stream open until the client leaves or the server closes.
 */
export function healthRoutes(router: ConnectRouter, serving: () => boolean): void {
  const statusOf = (service: string) =>
    HEALTH_SERVICES.includes(service)
      ? serving()
        ? ServingStatus.SERVING
        : ServingStatus.NOT_SERVING
      : ServingStatus.SERVICE_UNKNOWN;
  router.service(HealthService, {
    check(request: { service?: string }) {
      const status = statusOf(request.service ?? "");
      if (status === ServingStatus.SERVICE_UNKNOWN) {
        throw new ConnectError(`unknown service "${request.service}"`, Code.NotFound);
      }
      return response(status);
    },
    async *watch(request: { service?: string }, context: { signal: AbortSignal }) {
      yield response(statusOf(request.service ?? ""));
      await new Promise<void>((resolve) => {
        if (context.signal.aborted) resolve();
        else context.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    },
  } as never);
}
