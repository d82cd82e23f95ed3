// The client against @xdskit/control-plane over real HTTP/2 on 127.0.0.1: subscribe and ACK, NACK details seen by
// the server, TP3 errors, deletion, a server restart mid-run, a response larger than 4 MiB, wrapped resources, and
// the same flows over delta ADS.
import { create } from "@bufbuild/protobuf";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createXdsClient, type XdsClient } from "../src/index.js";
import { createXdsClientWithInternals } from "../src/internal.js";
import { type RecordingWatcher, recordingWatcher, summarize, type WatchEvent } from "./support/recorder.js";
import { type TestEndpoints, type TestListener, testEndpointsType, testListenerType } from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const EDS = testEndpointsType.typeUrl;

let server: ManagementServer;
let clients: XdsClient[] = [];

beforeEach(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
  await server.close();
});

function client(options: { apiType?: "GRPC" | "DELTA_GRPC"; features?: string[] } = {}): XdsClient {
  const c = createXdsClient({
    bootstrap: {
      xds_servers: [
        {
          server_uri: server.address,
          channel_creds: [{ type: "insecure" }],
          server_features: options.features ?? [],
          ...(options.apiType ? { api_type: options.apiType } : {}),
        },
      ],
      node: { id: "http2-node" },
    },
    env: {},
  });
  clients.push(c);
  return c;
}

async function eventually<T extends { name: string }>(
  w: RecordingWatcher<T>,
  count: number,
  timeoutMs = 5_000,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (w.events.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return summarize(w.take() as WatchEvent<T>[]);
}

function listener(name: string, statPrefix: string) {
  return create(ListenerSchema, { name, statPrefix });
}

function endpoints(name: string, localities: number) {
  return create(ClusterLoadAssignmentSchema, {
    clusterName: name,
    endpoints: Array.from({ length: localities }, () => ({})),
  });
}

for (const apiType of ["GRPC", "DELTA_GRPC"] as const) {
  describe(`over ${apiType === "GRPC" ? "state-of-the-world" : "delta"} ADS`, () => {
    it("receives a resource, ACKs it, and receives updates", async () => {
      server.setResource(listener("L", "one"));
      const c = client({ apiType });
      const w = recordingWatcher<TestListener>();
      c.watch(testListenerType, "L", w);
      const [first] = await eventually(w, 1);
      expect(first).toMatch(/^resource:.+:L$/);
      const ack = await server.hooks.waitForRequest((r) => r.disposition === "ack" && r.typeUrl === LDS);
      expect(ack.errorDetail).toBeUndefined();
      // The node goes on the first request of a stream only.
      expect(ack.request.node).toBeUndefined();
      server.setResource(listener("L", "two"));
      await eventually(w, 1);
      expect(c.dumpResources().genericXdsConfigs.map((g) => ClientResourceStatus[g.clientStatus])).toEqual(["ACKED"]);
    });

    it("NACKs an invalid resource with a detail the server sees, keeping the cached one", async () => {
      server.setResource(endpoints("E", 1));
      const c = client({ apiType });
      const w = recordingWatcher<TestEndpoints>();
      c.watch(testEndpointsType, "E", w);
      await eventually(w, 1);
      // The test type rejects cluster names starting with "bad": serve one under the name E.
      server.setResource(endpoints("bad-E", 2), { name: "E", wrap: true });
      const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack");
      expect(nack.errorDetail?.message).toContain("cluster_name: starts with bad");
      expect(nack.errorDetail?.message).toContain("(node ID: http2-node)");
      expect(await eventually(w, 1)).toEqual(["ambient:INVALID_ARGUMENT:nacked"]);
    });

    it("delivers a TP3 error once and recovers when the resource is set again", async () => {
      server.setResourceError(EDS, "E", { code: 7, message: "not for you" });
      const c = client({ apiType });
      const w = recordingWatcher<TestEndpoints>();
      c.watch(testEndpointsType, "E", w);
      expect(await eventually(w, 1)).toEqual(["error:PERMISSION_DENIED:server_error"]);
      expect(c.dumpResources().genericXdsConfigs[0]?.clientStatus).toBe(ClientResourceStatus.RECEIVED_ERROR);
      server.setResource(endpoints("E", 1));
      expect(await eventually(w, 1)).toEqual([expect.stringMatching(/^resource:.+:E$/)]);
    });

    it("keeps a removed listener cached and reports does-not-exist as ambient", async () => {
      server.setResources([listener("L", "x"), listener("M", "y")]);
      const c = client({ apiType });
      const w = recordingWatcher<TestListener>();
      c.watch(testListenerType, "L", w);
      c.watch(testListenerType, "M", recordingWatcher());
      await eventually(w, 1);
      server.removeResource(LDS, "L");
      expect(await eventually(w, 1)).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
      const entry = c.dumpResources().genericXdsConfigs.find((g) => g.name === "L");
      expect(entry?.clientStatus).toBe(ClientResourceStatus.DOES_NOT_EXIST);
      expect(entry?.xdsConfig).toBeDefined();
    });

    // SotW has no such message: the 15 s timer decides (timers-and-streams.test.ts).
    it.runIf(apiType === "DELTA_GRPC")(
      "says a name the server never had does not exist, not that it was removed",
      async () => {
        const c = client({ apiType });
        const w = recordingWatcher<TestListener>();
        c.watch(testListenerType, "never", w);
        await server.hooks.waitForResponse((r) => r.typeUrl === LDS);
        while (w.events.length === 0) await new Promise((r) => setTimeout(r, 5));
        const [event] = w.take();
        expect(event?.kind === "error" && event.error.message).toBe(
          "[NOT_FOUND] resource never does not exist on the xDS server (version 0) (node ID: http2-node)",
        );
        const entry = c.dumpResources().genericXdsConfigs.find((g) => g.name === "never");
        expect(entry?.clientStatus).toBe(ClientResourceStatus.DOES_NOT_EXIST);
        expect(entry?.errorState?.details).toBe("resource never does not exist on the xDS server (version 0)");
      },
    );

    it("survives a server restart: resubscribes with what it has and keeps the resource", async () => {
      server.setResource(endpoints("E", 1));
      const c = client({ apiType });
      const w = recordingWatcher<TestEndpoints>();
      c.watch(testEndpointsType, "E", w);
      await eventually(w, 1);
      const mark = server.hooks.mark();
      await server.restart();
      const again = await server.hooks.waitForRequest((r) => r.typeUrl === EDS, { after: mark, timeoutMs: 5_000 });
      if (again.kind === "sotw") expect(again.versionInfo).not.toBe("");
      else expect(Object.keys(again.request.initialResourceVersions)).toEqual(["E"]);
      server.setResource(endpoints("E", 3));
      // A reconnect that races the restart fails before any response: an ambient error, the resource is kept.
      // If it did, the same resource re-delivered after the reconnect clears that error. Never a non-ambient error.
      const deadline = Date.now() + 5_000;
      const isUpdate = (e: WatchEvent<TestEndpoints>) => e.kind === "resource" && e.resource.localities === 3;
      while (!w.events.some(isUpdate) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const events = w.take();
      expect(events.filter((e) => e.kind === "error")).toEqual([]);
      const seen = events.flatMap((e) => (e.kind === "resource" ? [e.resource.localities] : []));
      expect(seen.at(-1)).toBe(3);
      expect(seen.every((n) => n === 1 || n === 3)).toBe(true);
    });

    it("after an outage, gives a server's changed resource alone: the change is the recovery signal", async () => {
      // Steps: E cached (1 locality) by a watcher with onAmbientErrorCleared and one without; the server stops: both
      // hear UNAVAILABLE (ambient); E changes (2 localities) and the server starts again; the first response after
      // the outage carries the change: each watcher gets the new E and nothing else (not the old E first, nor a
      // `cleared` beside it), up to the client's ACK.
      server.setResource(endpoints("E", 1));
      const c = createXdsClientWithInternals(
        {
          bootstrap: {
            xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
            node: { id: "http2-node" },
          },
          env: {},
        },
        { backoff: { initialMs: 50, maxMs: 50 } },
      );
      clients.push(c);
      const clears = recordingWatcher<TestEndpoints>();
      const old = recordingWatcher<TestEndpoints>({ clears: false });
      c.watch(testEndpointsType, "E", clears);
      c.watch(testEndpointsType, "E", old);
      /** What each watcher saw, once both saw something. */
      const seen = async () => {
        const deadline = Date.now() + 5_000;
        while ((clears.events.length === 0 || old.events.length === 0) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 5));
        }
        return [clears, old].map((w) =>
          w.take().map((e) => (e.kind === "resource" ? `E:${e.resource.localities}` : e.kind)),
        );
      };
      expect(await seen()).toEqual([["E:1"], ["E:1"]]);
      await server.stop();
      expect(await seen()).toEqual([["ambient"], ["ambient"]]);
      server.setResource(endpoints("E", 2));
      const mark = server.hooks.mark();
      await server.start();
      const ack = await server.hooks.waitForRequest((r) => r.typeUrl === EDS && r.request.responseNonce !== "", {
        after: mark,
        timeoutMs: 5_000,
      });
      expect(ack.errorDetail).toBeUndefined();
      expect(await seen()).toEqual([["E:2"], ["E:2"]]);
    });

    it("accepts a response larger than 4 MiB", async () => {
      const big = create(ClusterLoadAssignmentSchema, {
        clusterName: "E",
        endpoints: [
          {
            // Over 4 MiB in few endpoints (each padded with 1 KiB of metadata): the size is what is tested.
            lbEndpoints: Array.from({ length: 4_500 }, (_, i) => ({
              hostIdentifier: {
                case: "endpoint" as const,
                value: {
                  address: {
                    address: {
                      case: "socketAddress" as const,
                      value: {
                        address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
                        portSpecifier: { case: "portValue" as const, value: 8080 },
                      },
                    },
                  },
                },
              },
              metadata: { filterMetadata: { pad: { note: "x".repeat(1_000) } } },
            })),
          },
        ],
      });
      server.setResource(big);
      const c = client({ apiType });
      const w = recordingWatcher<TestEndpoints>();
      c.watch(testEndpointsType, "E", w);
      const response = await server.hooks.waitForResponse((r) => r.typeUrl === EDS);
      const size =
        response.kind === "sotw"
          ? response.response.resources[0]!.value.length
          : response.response.resources[0]!.resource!.value.length;
      expect(size).toBeGreaterThan(4 * 1024 * 1024);
      expect(await eventually(w, 1, 45_000)).toEqual([expect.stringMatching(/^resource:.+:E$/)]);
    }, 60_000);
  });
}

describe("state-of-the-world specifics", () => {
  it("unwraps resources the server wraps in Resource", async () => {
    server.setResource(listener("W", "wrapped"), { wrap: true });
    const c = client();
    const w = recordingWatcher<TestListener>();
    c.watch(testListenerType, "W", w);
    expect(await eventually(w, 1)).toEqual([expect.stringMatching(/^resource:.+:W$/)]);
    const response = server.hooks.responses().find((r) => r.typeUrl === LDS);
    expect(response?.kind === "sotw" && response.response.resources[0]?.typeUrl).toBe(
      "type.googleapis.com/envoy.service.discovery.v3.Resource",
    );
  });

  it("tells uncached watchers when the server is unreachable", async () => {
    const c = client();
    await server.stop();
    const w = recordingWatcher<TestListener>();
    c.watch(testListenerType, "L", w);
    expect(await eventually(w, 1)).toEqual(["error:UNAVAILABLE:connection"]);
    server.setResource(listener("L", "back"));
    await server.start();
    // Backoff: the first retry comes after about 1 s.
    expect(await eventually(w, 1, 5_000)).toEqual([expect.stringMatching(/^resource:.+:L$/)]);
  });
});
