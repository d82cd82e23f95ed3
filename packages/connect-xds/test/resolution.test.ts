// Resolution (A27, A88) over real HTTP/2: calls wait for the first configuration (bounded by their deadline), an
// invalid update keeps the last good configuration, a cluster nothing uses any more is unsubscribed (A28), and
// closing the transport fails calls that still wait.

import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  type ManagementServer,
} from "@xdskit/control-plane";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { clientFor, NODE_ID, simpleSnapshot, startControlPlane } from "./support/harness.js";

/** The CDS names the client holds (CSDS). */
function clusterNames(client: XdsClient): string[] {
  return client
    .dumpResources()
    .genericXdsConfigs.filter((config) => config.typeUrl === CDS_TYPE_URL)
    .map((config) => config.name)
    .sort();
}

describe("resolution", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;

  beforeAll(async () => {
    server = await startControlPlane();
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    client = clientFor(server);
  });

  afterAll(async () => {
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("holds a call made before the configuration exists until it arrives", async () => {
    const transport = createXdsTransport({ target: "xds:///late", client });
    try {
      const call = served(echoClient(transport), { timeoutMs: 15_000 });
      // The call is waiting (no listener yet); then the configuration appears.
      await new Promise((resolve) => setImmediate(resolve));
      for (const resource of simpleSnapshot("late", "late-cluster", [{ zone: "z", endpoints: [a.address] }])) {
        server.setResource(resource);
      }
      expect(await call).toBe("a");
    } finally {
      await transport.close();
    }
  });

  it("fails a waiting call DEADLINE_EXCEEDED when its deadline ends first", async () => {
    const transport = createXdsTransport({ target: "xds:///never", client });
    try {
      const error = await served(echoClient(transport), { timeoutMs: 20 }).catch((e) => e);
      expect(error.code).toBe(Code.DeadlineExceeded);
      expect(error.rawMessage).toBe(
        `deadline exceeded while waiting for the xDS Listener "never" (LDS) (xDS node ID "${NODE_ID}")`,
      );
    } finally {
      await transport.close();
    }
  });

  it("keeps the last good configuration when an update is invalid (NACKed)", async () => {
    for (const resource of simpleSnapshot("kept", "kept-cluster", [{ zone: "z", endpoints: [a.address] }])) {
      server.setResource(resource);
    }
    const transport = createXdsTransport({ target: "xds:///kept", client });
    try {
      const echo = echoClient(transport);
      expect(await served(echo)).toBe("a");
      // A Listener without the router filter is invalid: the client NACKs it and keeps the one it had.
      const invalid = create(ListenerSchema, {
        name: "kept",
        apiListener: {
          apiListener: anyPack(
            HttpConnectionManagerSchema,
            create(HttpConnectionManagerSchema, {
              routeSpecifier: {
                case: "rds",
                value: {
                  routeConfigName: "other",
                  configSource: { configSourceSpecifier: { case: "ads", value: {} } },
                },
              },
            }),
          ),
        },
      });
      const mark = server.hooks.mark();
      server.setResource(invalid);
      await server.hooks.waitForRequest((event) => event.kind === "sotw" && event.request.errorDetail !== undefined, {
        after: mark,
      });
      for (let i = 0; i < 5; i++) expect(await served(echo)).toBe("a");
    } finally {
      await transport.close();
    }
  });

  it("unsubscribes a cluster no route uses any more", async () => {
    for (const resource of simpleSnapshot("moving", "old-cluster", [{ zone: "z", endpoints: [a.address] }])) {
      server.setResource(resource);
    }
    server.setResource(buildCluster({ name: "new-cluster" }));
    server.setResource(
      buildClusterLoadAssignment({ clusterName: "new-cluster", localities: [{ zone: "z", endpoints: [b.address] }] }),
    );
    const transport = createXdsTransport({ target: "xds:///moving", client });
    try {
      const echo = echoClient(transport);
      expect(await served(echo)).toBe("a");
      expect(clusterNames(client)).toContain("old-cluster");
      server.setResource(buildRouteConfiguration({ name: "moving-route", cluster: "new-cluster" }));
      await untilServedBy(echo, "b");
      expect(clusterNames(client)).toContain("new-cluster");
      expect(clusterNames(client)).not.toContain("old-cluster");
    } finally {
      await transport.close();
    }
  });

  it("fails calls still waiting when the transport closes", async () => {
    const transport = createXdsTransport({ target: "xds:///closing", client });
    const call = served(echoClient(transport)).catch((e) => e);
    await new Promise((resolve) => setImmediate(resolve));
    await transport.close();
    const error = await call;
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toContain("closed");
  });
});
