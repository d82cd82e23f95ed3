import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { xdsRegistry } from "@xdskit/protos";
import type { DiscoveryResponse } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type ManagementServer,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";

/** The name of each resource in a SotW response (unwrapping `Resource`). */
export function namesOf(response: DiscoveryResponse): string[] {
  return response.resources.map((any) => nameOf(any));
}

export function nameOf(any: Any): string {
  const message = anyUnpack(any, xdsRegistry) as { $typeName: string; name?: string; clusterName?: string } | undefined;
  if (!message) throw new Error(`cannot unpack ${any.typeUrl}`);
  if (message.$typeName === ResourceSchema.typeName) return (message as unknown as { name: string }).name;
  return message.clusterName ?? message.name ?? "";
}

export function errorNamesOf(response: DiscoveryResponse): string[] {
  return response.resourceErrors.map((e) => e.resourceName?.name ?? "");
}

/** The usual chain: listener -> route -> cluster -> endpoints. */
export function setChain(server: Pick<ManagementServer, "setResources">, suffix = "", port = 8080): void {
  server.setResources([
    buildListener({ name: `listener${suffix}`, routeConfigName: `route${suffix}` }),
    buildRouteConfiguration({ name: `route${suffix}`, cluster: `cluster${suffix}` }),
    buildCluster({ name: `cluster${suffix}` }),
    buildClusterLoadAssignment({ clusterName: `cluster${suffix}`, localities: [{ endpoints: [`127.0.0.1:${port}`] }] }),
  ]);
}

/** The most recently opened stream still open (tests run one after another on one server). */
export function newestStream(server: ManagementServer) {
  const streams = server.streams();
  if (streams.length === 0) throw new Error("no open stream");
  return streams.reduce((a, b) => (b.id > a.id ? b : a));
}

/**
 * Opens a SotW stream, subscribes to `names` of a type and ACKs the first response; returns once the server has
 * taken the ACK (so a change made next is not raced by it).
 */
export async function subscribe(
  server: ManagementServer,
  h: Harness,
  typeUrl: string,
  names: string[],
  node: { id: string; cluster?: string } | undefined = { id: "n" },
) {
  const before = server.hooks.mark();
  const s = h.sotw();
  await s.send({ ...(node ? { node } : {}), typeUrl, resourceNames: names });
  const first = await s.next();
  await s.ack(first, names);
  await server.hooks.waitForRequest((r) => r.responseNonce === first.nonce && r.disposition !== "subscribe", {
    after: before,
  });
  return { s, first };
}

/**
 * One server and client harness for a whole test file: `use` gets them once the server listens; after each test the
 * test streams close and every resource is removed; after the file the server closes.
 */
export function shareServer(use: (server: ManagementServer, h: Harness) => void): void {
  let server: ManagementServer | undefined;
  let h: Harness | undefined;
  beforeAll(async () => {
    server = await createManagementServer();
    h = createHarness(server.url);
    use(server, h);
  });
  afterEach(() => {
    h?.cleanup();
    server?.setSnapshot([]);
  });
  afterAll(() => server?.close());
}
