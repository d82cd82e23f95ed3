// TP2 variants end to end: @xdskit/control-plane serves several variants of one name and a DPDS resource per node;
// wrapped clients subscribe with the parameters their DPDS resource gives, over real HTTP/2 in both protocols.
// Each test asserts what the watchers are told, what the server saw, and CSDS.
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { canonicalText, fromProto } from "@xdskit/constraint-matcher";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { createXdsClient, type Logger, type XdsClient, type XdsMetricsRecorder } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DPDS_TYPE_URL, withDynamicParameters } from "../src/index.js";
import { csdsWithErrors, eventually, recordingLogger, subscribedOn } from "./support/e2e.js";
import { testMetrics } from "./support/metrics.js";
import { recorder } from "./support/recorder.js";
import {
  describeListener,
  EDS_TYPE_NAME,
  LDS,
  LDS_TYPE_NAME,
  listener,
  type TestListener,
  testListenerType,
} from "./support/test-types.js";

for (const apiType of ["GRPC", "DELTA_GRPC"] as const) {
  const sotw = apiType === "GRPC";
  describe(`variants and DPDS over ${sotw ? "state-of-the-world" : "delta"} ADS`, () => {
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

    function wrapped(
      nodeId: string,
      options: { bootstrap?: Record<string, unknown>; logger?: Logger; metrics?: XdsMetricsRecorder } = {},
    ): XdsClient {
      const client = withDynamicParameters(
        createXdsClient({
          bootstrap: {
            xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
            node: { id: nodeId },
            ...options.bootstrap,
          },
          env: {},
          ...(options.metrics ? { metrics: options.metrics } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
        }),
        options.logger ? { logger: options.logger } : {},
      );
      clients.push(client);
      return client;
    }

    it("moves a watch to the variant a new DPDS resource names, make-before-break, with no gap", async () => {
      // Steps: variants stable/canary of L; node-1's DPDS says stable; the watcher gets s1. DPDS says canary, and
      // in the same run the stable variant is removed (the server swaps them): the watcher is told c1 and nothing
      // else (no does-not-exist between); the server ends with the canary subscription only; CSDS shows it.
      server.setResource(listener("L", "s1"), { constraints: "env=stable" });
      server.setResource(listener("L", "c1"), { constraints: "env=canary" });
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: "env=stable" });
      const client = wrapped("node-1");
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:s1"]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=stable}"]);

      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: "env=canary" });
      server.removeResource(LDS, "L", "env=stable");
      expect(await w.next(1)).toEqual(["resource:L:c1"]);
      await eventually(() => expect(subscribedOn(server, LDS)).toEqual(["L{env=canary}"]));
      await eventually(() => expect(csdsWithErrors(client, LDS)).toEqual(["L{env=canary} ACKED"]));
      // Nothing more arrives: give any stray callback time to show.
      await new Promise((r) => setTimeout(r, 100));
      expect(w.take()).toEqual([]);

      // Back to stable, whose variant is gone. Delta: the server says so at once, a definite answer that takes the
      // resource away. SotW: nothing says so until the does-not-exist timer; until then the watcher keeps c1 and
      // both subscriptions stay.
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: "env=stable" });
      if (sotw) {
        await eventually(() => expect(subscribedOn(server, LDS)).toEqual(["L{env=canary}", "L{env=stable}"]));
        await new Promise((r) => setTimeout(r, 100));
        expect(w.take()).toEqual([]);
        expect(csdsWithErrors(client, LDS)).toEqual(["L{env=canary} ACKED", "L{env=stable} REQUESTED"]);
      } else {
        expect(await w.next(1)).toEqual(["error:NOT_FOUND:does_not_exist"]);
        await eventually(() => expect(subscribedOn(server, LDS)).toEqual(["L{env=stable}"]));
        expect(csdsWithErrors(client, LDS)).toEqual([expect.stringMatching(/^L\{env=stable\} DOES_NOT_EXIST/)]);
      }
    });

    it("gives each node the variant its own DPDS resource names; an update to one variant reaches only its subscribers", async () => {
      // Steps (scenario 68, DPDS per node): prod and test variants of L; node-a's DPDS says prod, node-b's test;
      // each gets its variant; the prod variant changes: only node-a hears; the DPDS resources are do_not_cache.
      server.setResource(listener("L", "p1"), { constraints: "env=prod" });
      server.setResource(listener("L", "t1"), { constraints: "env=test" });
      server.setDynamicParameters("node-a", { [LDS_TYPE_NAME]: "env=prod" });
      server.setDynamicParameters("node-b", { [LDS_TYPE_NAME]: "env=test" });
      const a = recorder<TestListener>(describeListener);
      const b = recorder<TestListener>(describeListener);
      wrapped("node-a").watch(testListenerType, "L", a);
      wrapped("node-b").watch(testListenerType, "L", b);
      expect(await a.next(1)).toEqual(["resource:L:p1"]);
      expect(await b.next(1)).toEqual(["resource:L:t1"]);
      const dpdsResponses = server.hooks.responses().filter((r) => r.typeUrl === DPDS_TYPE_URL);
      expect(dpdsResponses.length).toBe(2);
      for (const r of dpdsResponses) {
        const wrappers =
          r.kind === "sotw"
            ? r.response.resources.map((any) => fromBinary(ResourceSchema, any.value))
            : r.response.resources;
        expect(wrappers.map((x) => x.cacheControl?.doNotCache)).toEqual([true]);
      }
      server.setResource(listener("L", "p2"), { constraints: "env=prod" });
      expect(await a.next(1)).toEqual(["resource:L:p2"]);
      await new Promise((r) => setTimeout(r, 100));
      expect(b.take()).toEqual([]);
    });

    it("adds, updates and removes one variant while another of the same name stays; a TP3 error reaches one variant", async () => {
      // Steps: node-1's bootstrap says env=prod and its DPDS resource adds team=core; one watch of L keeps the
      // bootstrap's env, another brings env=test of its own. (1) Both variants arrive; (2) the test variant is
      // updated; (3) removed: its watcher is told does-not-exist (ambient: A88 keeps it), prod untouched; (4) a TP3
      // error on the prod variant only. The wire carries the constraints each time.
      server.setResource(listener("L", "p1"), { constraints: "env=prod" });
      server.setResource(listener("L", "t1"), { constraints: "env=test" });
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: 'team="core"' });
      const client = wrapped("node-1", { bootstrap: { dynamic_parameters: { env: "prod" } } });
      const prod = recorder<TestListener>(describeListener);
      const test = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", prod);
      client.watch(testListenerType, "L", test, { dynamicParameters: { env: "test" } });
      expect(await prod.next(1)).toEqual(["resource:L:p1"]);
      expect(await test.next(1)).toEqual(["resource:L:t1"]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=prod,team=core}", "L{env=test,team=core}"]);

      server.setResource(listener("L", "t2"), { constraints: "env=test" });
      expect(await test.next(1)).toEqual(["resource:L:t2"]);

      const mark = server.hooks.mark();
      server.removeResource(LDS, "L", "env=test");
      expect(await test.next(1)).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
      const removal = await server.hooks.waitForResponse((r) => r.typeUrl === LDS, { after: mark });
      if (removal.kind === "delta") {
        expect(
          removal.response.removedResourceNames.map(
            (n) => `${n.name}{${canonicalText(fromProto(n.dynamicParameterConstraints))}}`,
          ),
        ).toEqual(["L{env=test}"]);
      } else {
        // SotW lists the whole state: the prod variant alone.
        expect(removal.response.resources.length).toBe(1);
      }
      expect(csdsWithErrors(client, LDS)).toEqual([
        "L{env=prod,team=core} ACKED",
        expect.stringMatching(/^L\{env=test,team=core\} DOES_NOT_EXIST/),
      ]);

      const errorMark = server.hooks.mark();
      server.setResourceError(LDS, "L", { code: 14, message: "prod is being rebuilt" }, { constraints: "env=prod" });
      expect(await prod.next(1)).toEqual(["ambient:UNAVAILABLE:server_error"]);
      const withError = await server.hooks.waitForResponse((r) => r.typeUrl === LDS && r.errorNames.length > 0, {
        after: errorMark,
      });
      const errors = withError.response.resourceErrors.map(
        (e) =>
          `${e.resourceName?.name}{${canonicalText(fromProto(e.resourceName?.dynamicParameterConstraints))}} ${e.errorDetail?.code}`,
      );
      expect(errors).toEqual(["L{env=prod} 14"]);
      expect(csdsWithErrors(client, LDS)).toEqual([
        expect.stringMatching(/^L\{env=prod,team=core\} RECEIVED_ERROR/),
        expect.stringMatching(/^L\{env=test,team=core\} DOES_NOT_EXIST/),
      ]);
      expect(test.take()).toEqual([]);
    });

    it("picks among variants by the matcher's rules: exists, not, or, unconstrained, keys no constraint mentions", async () => {
      // Steps (scenario 67 end to end): variants of L whose constraints use every operator; DPDS moves node-1
      // through parameter maps, each selecting one variant; the watcher follows, one update per move.
      server.setResources([
        { resource: listener("L", "v2"), constraints: 'env="prod" && version="v2"' },
        { resource: listener("L", "default-prod"), constraints: 'env="prod" && !exists(version)' },
        { resource: listener("L", "lower"), constraints: 'env="dev" || env="test"' },
        listener("M", "anyone"),
      ]);
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: 'env="prod" && version="v2"' });
      const client = wrapped("node-1", { bootstrap: { dynamic_parameters: { zone: "a" } } });
      const l = recorder<TestListener>(describeListener);
      const m = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", l);
      client.watch(testListenerType, "M", m);
      expect(await l.next(1)).toEqual(["resource:L:v2"]);
      expect(await m.next(1)).toEqual(["resource:M:anyone"]);
      for (const [dpds, expected] of [
        ['env="prod"', "resource:L:default-prod"],
        ['env="test"', "resource:L:lower"],
      ] as const) {
        server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: dpds });
        expect(await l.next(1)).toEqual([expected]);
      }
      // To the same variant under other parameters (a key no constraint mentions): the subscription moves, the
      // watcher is told nothing, as the resource is the same.
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: 'env="dev" && version="v9"' });
      await eventually(() =>
        expect(subscribedOn(server, LDS)).toEqual(["L{env=dev,version=v9,zone=a}", "M{env=dev,version=v9,zone=a}"]),
      );
      expect(l.take()).toEqual([]);
      expect(m.take()).toEqual([]);
    });

    it("resolves two matching variants to the most specific, logs and counts it; CSDS and metrics name each variant", async () => {
      // Steps (scenarios 69 and 70): overlapping variants env=prod and env=prod && version=v2 (allowed explicitly);
      // node-1's DPDS gives env=prod; one watch adds version=v2 of its own. Each watcher gets its variant; where
      // both variants reach a subscription the client picks the more specific, logs and counts it; CSDS names the
      // two subscriptions apart and reports each variant with its constraints; the resources gauge has a series per
      // subscription.
      server.setResource(listener("L", "prod"), { constraints: "env=prod", allowOverlap: true });
      server.setResource(listener("L", "prod-v2"), { constraints: "env=prod && version=v2", allowOverlap: true });
      server.setDynamicParameters("node-1", { [LDS_TYPE_NAME]: "env=prod", [EDS_TYPE_NAME]: "env=prod" });
      const logger = recordingLogger();
      const metrics = testMetrics();
      const client = wrapped("node-1", { logger, metrics });
      const plain = recorder<TestListener>(describeListener);
      const v2 = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", plain);
      client.watch(testListenerType, "L", v2, { dynamicParameters: { version: "v2" } });
      expect(await plain.next(1)).toEqual(["resource:L:prod"]);
      expect(await v2.next(1)).toEqual(["resource:L:prod-v2"]);

      const configs = client.dumpResources().genericXdsConfigs.filter((g) => g.typeUrl === LDS);
      const variants = configs.map((g) => {
        const wrapper = g.xdsConfig && anyUnpack(g.xdsConfig, ResourceSchema);
        return `${g.name} holds ${canonicalText(fromProto(wrapper?.resourceName?.dynamicParameterConstraints))}`;
      });
      expect(variants.sort()).toEqual([
        "L{env=prod,version=v2} holds env=prod && version=v2",
        "L{env=prod} holds env=prod",
      ]);
      const series = [...metrics.gauges()]
        .filter(([k]) => k.startsWith("grpc.xds_client.resources{"))
        .map(([k, v]) => `${k} ${v}`);
      expect(series.filter((s) => s.includes(LDS_TYPE_NAME)).sort()).toEqual([
        `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=acked,grpc.xds.dynamic_parameters=env=prod,grpc.xds.resource_type=${LDS_TYPE_NAME}} 1`,
        `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=acked,grpc.xds.dynamic_parameters=env=prod,version=v2,grpc.xds.resource_type=${LDS_TYPE_NAME}} 1`,
      ]);
      // Both variants reached the version=v2 subscription in one response: counted once, and logged.
      const ambiguous = [...metrics.counters].filter(([k]) =>
        k.startsWith("grpc.xds_client.resource_variants_ambiguous"),
      );
      expect(ambiguous).toEqual([
        [
          `grpc.xds_client.resource_variants_ambiguous{grpc.target=#server,grpc.xds.resource_type=${LDS_TYPE_NAME},grpc.xds.server=${server.address}}`,
          1,
        ],
      ]);
      expect(logger.lines).toContain(
        "warn [xds-client] 2 variants of L match parameters {env=prod,version=v2}; using the most specific: env=prod && version=v2",
      );
    });
  });
}
