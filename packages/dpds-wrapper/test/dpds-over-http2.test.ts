// The wrapper against @xdskit/control-plane over real HTTP/2, in both protocols: the DPDS resource fetched over ADS
// turns into the parameters the server sees on every watch (DPDS wins per key over the bootstrap's); a DPDS resource
// that cannot become parameters is NACKed naming type and constraint; an absent, failing or late DPDS resource means
// the bootstrap's parameters only, with the reason in CSDS and in the log.
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_DPDS_RESOURCE_NAME,
  DPDS_TYPE_URL,
  type DynamicParametersOptions,
  withDynamicParameters,
} from "../src/index.js";

const DPDS = DEFAULT_DPDS_RESOURCE_NAME;

import { serveDpds } from "./support/dpds-server.js";
import { csdsWithErrors, eventually, locatorsOf, namesOf, recordingLogger, subscribedOn } from "./support/e2e.js";
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

const NODE = "node-e2e";

for (const apiType of ["GRPC", "DELTA_GRPC"] as const) {
  describe(`the wrapper over ${apiType === "GRPC" ? "state-of-the-world" : "delta"} ADS`, () => {
    let server: ManagementServer;
    let client: XdsClient | undefined;

    beforeEach(async () => {
      server = await createManagementServer({ host: "127.0.0.1", port: 0 });
    });

    afterEach(async () => {
      await client?.close();
      client = undefined;
      await server.close();
    });

    function wrapped(options: DynamicParametersOptions = {}, bootstrap: Record<string, unknown> = {}): XdsClient {
      client = withDynamicParameters(
        createXdsClient({
          bootstrap: {
            xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
            node: { id: NODE },
            dynamic_parameters: { env: "boot", zone: "a" },
            ...bootstrap,
          },
          env: {},
        }),
        options,
      );
      return client;
    }

    it("passes a wildcard watch to the inner client, with the bootstrap's parameters", async () => {
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, { [LDS_TYPE_NAME]: 'env="prod"' });
      server.setResource(listener("L", "one"));
      const seen: string[] = [];
      wrapped().watchAll(testListenerType, {
        onResourceChanged: (name, result) => {
          seen.push(`${name} ${result.ok}`);
        },
        onAmbientError: () => {},
      });
      await eventually(() => expect(seen).toEqual(["L true"]));
      const wildcard = server.streams()[0]?.types.find((t) => t.typeUrl === LDS);
      expect(wildcard?.wildcardParameters).toEqual([{ env: "boot", zone: "a" }]);
    });

    it("subscribes with the DPDS parameters merged over the bootstrap's, per type", async () => {
      // Steps: the DPDS resource gives listeners env=prod, version=v2 and endpoints tier=gold; a watch of
      // listener L reaches the server as one locator with both maps merged (DPDS wins on env); the DPDS resource
      // itself was subscribed with the bootstrap's parameters; CSDS names both subscriptions with their parameters.
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, {
        [LDS_TYPE_NAME]: 'env="prod" && version="v2"',
        [EDS_TYPE_NAME]: 'tier="gold"',
      });
      server.setResource(listener("L", "one"));
      const c = wrapped();
      const w = recorder<TestListener>(describeListener);
      c.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      const dpdsRequest = await server.hooks.waitForRequest((r) => r.typeUrl === DPDS_TYPE_URL);
      expect(locatorsOf(dpdsRequest)).toEqual([`${DPDS}{env=boot,zone=a}`]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=prod,version=v2,zone=a}"]);
      expect(csdsWithErrors(c, DPDS_TYPE_URL)).toEqual([`${DPDS}{env=boot,zone=a} ACKED`]);
      expect(csdsWithErrors(c, LDS)).toEqual(["L{env=prod,version=v2,zone=a} ACKED"]);
      // Only one LDS subscription ever reached the server: the watch waited for DPDS.
      const ldsLocators = server.hooks
        .requests()
        .filter((r) => r.typeUrl === LDS)
        .flatMap(locatorsOf);
      expect([...new Set(ldsLocators)]).toEqual(["L{env=prod,version=v2,zone=a}"]);
    });

    it("puts names with parameters in resource_locators and the others in resource_names, in one request", async () => {
      // Scenario 65 through the wrapper: listeners get env=prod from DPDS; the authority plain.example has no
      // parameters and no DPDS resource, so its names go as plain names; both watches made in one tick go out in
      // one LDS request.
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, { [LDS_TYPE_NAME]: 'env="prod"' });
      const plainName = "xdstp://plain.example/envoy.config.listener.v3.Listener/P";
      server.setResources([listener("L", "one"), listener(plainName, "plain")]);
      const c = wrapped(
        { authorityResourceNames: { "plain.example": null } },
        { dynamic_parameters: {}, authorities: { "plain.example": {} } },
      );
      await server.hooks.waitForRequest((r) => r.typeUrl === DPDS_TYPE_URL && r.disposition === "ack");
      const l = recorder<TestListener>(describeListener);
      const p = recorder<TestListener>(describeListener);
      c.watch(testListenerType, "L", l);
      c.watch(testListenerType, plainName, p);
      expect(await l.next(1)).toEqual(["resource:L:one"]);
      expect(await p.next(1)).toEqual([`resource:${plainName}:plain`]);
      const [request, ...more] = server.hooks
        .requests()
        .filter((r) => r.typeUrl === LDS && r.disposition === "subscribe");
      expect(more).toEqual([]);
      expect(locatorsOf(request!)).toEqual(["L{env=prod}"]);
      expect(namesOf(request!)).toEqual([plainName]);
    });

    it("NACKs a DPDS resource that cannot become parameters, naming type and constraint, and goes on without it", async () => {
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, { [LDS_TYPE_NAME]: 'env="prod" && exists(canary)' });
      server.setResource(listener("L", "one"));
      const logger = recordingLogger();
      const c = wrapped({ logger });
      const w = recorder<TestListener>(describeListener);
      c.watch(testListenerType, "L", w);
      const nack = await server.hooks.waitForRequest((r) => r.typeUrl === DPDS_TYPE_URL && r.disposition === "nack");
      const constraintError = `resource_type_constraints["${LDS_TYPE_NAME}"].and_constraints.constraints[1]: exists(canary) cannot become a parameter: only key=value, alone or in a top-level and, can`;
      expect(nack.errorDetail?.message).toContain(constraintError);
      expect(nack.errorDetail?.message).toContain(`(node ID: ${NODE})`);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=boot,zone=a}"]);
      const [dpdsRow] = csdsWithErrors(c, DPDS_TYPE_URL);
      expect(dpdsRow).toContain(`${DPDS}{env=boot,zone=a} NACKED (`);
      expect(dpdsRow).toContain(constraintError);
      expect(logger.lines.filter((l) => l.startsWith("warn [dpds-wrapper]"))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^warn \\[dpds-wrapper\\] DPDS resource ${DPDS}: \\[INVALID_ARGUMENT\\] .*exists\\(canary\\) cannot become a parameter.*; subscribing with no parameters from DPDS$`,
          ),
        ),
      ]);
    });

    it("goes on with the bootstrap's parameters when the DPDS resource does not come in time, and moves once it does", async () => {
      // Steps: no DPDS resource on the server; the watch waits 100 ms for it, then subscribes with the bootstrap's
      // parameters (CSDS and the log say why); the DPDS resource appears: the watch moves to its parameters.
      server.setResource(listener("L", "one"));
      const logger = recordingLogger();
      // SotW: a missing resource of this type is only noticed by the 15 s timer; delta: the server says so at once.
      const c = wrapped({ logger, waitForDpdsMs: apiType === "GRPC" ? 100 : 60_000 });
      const w = recorder<TestListener>(describeListener);
      c.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=boot,zone=a}"]);
      if (apiType === "GRPC") {
        expect(csdsWithErrors(c, DPDS_TYPE_URL)).toEqual([
          `${DPDS}{env=boot,zone=a} REQUESTED (no dynamic parameters from this resource: not received within 100 ms)`,
        ]);
        expect(logger.lines).toContain(
          `warn [dpds-wrapper] DPDS resource ${DPDS}: not received within 100 ms; subscribing with no parameters from DPDS until it comes`,
        );
      } else {
        // The client's own CSDS entry says why.
        expect(csdsWithErrors(c, DPDS_TYPE_URL)).toEqual([
          `${DPDS}{env=boot,zone=a} DOES_NOT_EXIST (resource ${DPDS} does not exist on the xDS server (version 0))`,
        ]);
        expect(logger.lines).toContain(
          `warn [dpds-wrapper] DPDS resource ${DPDS}: [NOT_FOUND] resource ${DPDS} does not exist on the xDS server (version 0) (node ID: ${NODE}); subscribing with no parameters from DPDS`,
        );
      }
      // The DPDS resource appears: the watch moves to its parameters; the control plane serves its one
      // unconstrained L to the new subscription too, which the watcher is not told again.
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, { [LDS_TYPE_NAME]: 'env="prod"' });
      await eventually(() => expect(subscribedOn(server, LDS)).toEqual(["L{env=prod,zone=a}"]));
      expect(csdsWithErrors(c, DPDS_TYPE_URL)).toEqual([`${DPDS}{env=boot,zone=a} ACKED`]);
      expect(w.take()).toEqual([]);
      expect(csdsWithErrors(c, LDS)).toEqual(["L{env=prod,zone=a} ACKED"]);
    });

    it("goes on with the bootstrap's parameters when the DPDS server is unreachable, and says so in CSDS", async () => {
      // The DPDS resource lives in an authority whose only server refuses connections.
      const dead = await createManagementServer({ host: "127.0.0.1", port: 0 });
      const deadAddress = dead.address;
      await dead.close();
      const dpdsName = `xdstp://dpds.example/envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap/${NODE}`;
      server.setResource(listener("L", "one"));
      const logger = recordingLogger();
      const c = wrapped(
        { logger, resourceName: dpdsName },
        {
          authorities: {
            "dpds.example": {
              xds_servers: [{ server_uri: deadAddress, channel_creds: [{ type: "insecure" }], api_type: apiType }],
            },
          },
        },
      );
      const w = recorder<TestListener>(describeListener);
      c.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      expect(subscribedOn(server, LDS)).toEqual(["L{env=boot,zone=a}"]);
      const [row] = csdsWithErrors(c, DPDS_TYPE_URL);
      expect(row).toMatch(
        new RegExp(
          `^${dpdsName.replaceAll(".", "\\.")} REQUESTED \\(no dynamic parameters from this resource: \\[UNAVAILABLE\\] `,
        ),
      );
      expect(
        logger.lines.some((l) => l.startsWith(`warn [dpds-wrapper] DPDS resource ${dpdsName}: [UNAVAILABLE]`)),
      ).toBe(true);
    });

    it("has the plain client's interface, and closes the client it wraps", async () => {
      serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, {});
      const inner = createXdsClient({
        bootstrap: {
          xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
          node: { id: NODE },
        },
        env: {},
      });
      const c = withDynamicParameters(inner);
      expect(Object.keys(c).sort()).toEqual(Object.keys(inner).sort());
      expect(c.bootstrap).toBe(inner.bootstrap);
      expect(c.features).toBe(inner.features);
      await c.close();
      await c.close();
      const w = recorder<TestListener>(describeListener);
      inner.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["error:CANCELLED:internal"]);
    });
  });
}
