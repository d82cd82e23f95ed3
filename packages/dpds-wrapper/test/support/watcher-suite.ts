// The watcher tests that every XdsClient must pass, written once and run against several clients (a "flavor": the
// plain client, the wrapped one) over real HTTP/2 against @xdskit/control-plane on 127.0.0.1, in both protocols.
// They assert what a watcher is told, what the server sees and CSDS; only the CSDS name of a subscription depends on
// the flavor (the wrapped client adds its DPDS parameters).
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { BootstrapConfig, ResourceResult, XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recorder } from "./recorder.js";
import {
  describeEndpoints,
  describeListener,
  EDS,
  endpoints,
  LDS,
  listener,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
} from "./test-types.js";

export const SUITE_NODE = "suite-node";

export interface Flavor {
  readonly name: string;
  /** Serves what this client needs besides the tests' resources (the DPDS resource). */
  prepare(server: ManagementServer): void;
  create(bootstrap: BootstrapConfig): XdsClient;
  /** The CSDS name of a subscription of `name` watched with `parameters` (none: the bootstrap's, which are empty). */
  subscriptionName(name: string, parameters?: Readonly<Record<string, string>>): string;
}

export type ApiType = "GRPC" | "DELTA_GRPC";

export function bootstrapFor(server: ManagementServer, apiType: ApiType): BootstrapConfig {
  return {
    xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
    node: { id: SUITE_NODE },
    authorities: { "auth.example": {} },
  };
}

/** `name{k=v,...}`, keys sorted; the plain name without parameters. */
export function labelOf(name: string, parameters: Readonly<Record<string, string>>): string {
  const keys = Object.keys(parameters).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}=${parameters[k]}`).join(",")}}`;
}

/** CSDS rows of one type as `name status`. */
export function csdsRows(client: XdsClient, typeUrl: string): string[] {
  return client
    .dumpResources()
    .genericXdsConfigs.filter((g) => g.typeUrl === typeUrl)
    .map((g) => `${g.name} ${ClientResourceStatus[g.clientStatus]}`)
    .sort();
}

export function describeWatcherSuite(flavor: Flavor, apiType: ApiType): void {
  describe(`${flavor.name} client over ${apiType === "GRPC" ? "state-of-the-world" : "delta"} ADS`, () => {
    let server: ManagementServer;
    let client: XdsClient;
    const name = (n: string, parameters?: Readonly<Record<string, string>>) => flavor.subscriptionName(n, parameters);

    beforeEach(async () => {
      server = await createManagementServer({ host: "127.0.0.1", port: 0 });
      flavor.prepare(server);
      client = flavor.create(bootstrapFor(server, apiType));
    });

    afterEach(async () => {
      await client.close();
      await server.close();
    });

    it("delivers a resource and its updates, and not a byte-identical one again", async () => {
      server.setResource(listener("L", "one"));
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      const mark = server.hooks.mark();
      server.setResource(listener("L", "one"), { force: true });
      await server.hooks.waitForRequest((r) => r.typeUrl === LDS && r.disposition === "ack", { after: mark });
      server.setResource(listener("L", "two"));
      expect(await w.next(1)).toEqual(["resource:L:two"]);
      expect(csdsRows(client, LDS)).toEqual([`${name("L")} ACKED`]);
    });

    it("gives a second watcher the cached resource, and tells a cancelled one nothing more", async () => {
      server.setResource(listener("L", "one"));
      const first = recorder<TestListener>(describeListener);
      const cancel = client.watch(testListenerType, "L", first);
      expect(await first.next(1)).toEqual(["resource:L:one"]);
      const second = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", second);
      expect(await second.next(1)).toEqual(["resource:L:one"]);
      cancel();
      cancel();
      server.setResource(listener("L", "two"));
      expect(await second.next(1)).toEqual(["resource:L:two"]);
      expect(first.take()).toEqual([]);
    });

    it("NACKs an invalid update with a detail the server sees, keeps the resource, and clears the error", async () => {
      server.setResource(listener("L", "one"));
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      server.setResource(listener("L", "bad"));
      const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack");
      expect(nack.errorDetail?.message).toContain("L: stat_prefix: starts with bad");
      expect(nack.errorDetail?.message).toContain(`(node ID: ${SUITE_NODE})`);
      expect(await w.next(1)).toEqual(["ambient:INVALID_ARGUMENT:nacked"]);
      expect(csdsRows(client, LDS)).toEqual([`${name("L")} NACKED`]);
      server.setResource(listener("L", "one"));
      expect(await w.next(1)).toEqual(["cleared"]);
      expect(csdsRows(client, LDS)).toEqual([`${name("L")} ACKED`]);
    });

    it("reports an invalid first resource as an error", async () => {
      server.setResource(listener("L", "bad"));
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["error:INVALID_ARGUMENT:nacked"]);
    });

    it("keeps a removed listener and reports does-not-exist as ambient", async () => {
      server.setResources([listener("L", "one"), listener("M", "m")]);
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      client.watch(testListenerType, "M", recorder(describeListener));
      expect(await w.next(1)).toEqual(["resource:L:one"]);
      server.removeResource(LDS, "L");
      expect(await w.next(1)).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
      expect(csdsRows(client, LDS)).toEqual([`${name("L")} DOES_NOT_EXIST`, `${name("M")} ACKED`]);
    });

    if (apiType === "DELTA_GRPC") {
      it("reports a name the delta server does not have as does-not-exist at once", async () => {
        const missing = recorder<TestListener>(describeListener);
        client.watch(testListenerType, "missing", missing);
        expect(await missing.next(1)).toEqual(["error:NOT_FOUND:does_not_exist"]);
        expect(csdsRows(client, LDS)).toEqual([`${name("missing")} DOES_NOT_EXIST`]);
      });
    }

    it("delivers a TP3 error, and the resource once the server has it", async () => {
      server.setResourceError(EDS, "E", { code: 7, message: "not for you" });
      const w = recorder<TestEndpoints>(describeEndpoints);
      client.watch(testEndpointsType, "E", w);
      expect(await w.next(1)).toEqual(["error:PERMISSION_DENIED:server_error"]);
      expect(csdsRows(client, EDS)).toEqual([`${name("E")} RECEIVED_ERROR`]);
      server.setResource(endpoints("E", 2));
      expect(await w.next(1)).toEqual(["resource:E:2"]);
    });

    it("holds the next ADS read until the watcher's promise settles (flow control)", async () => {
      // Steps: the watcher holds the first update; the server sends a second, which the client does not read (no
      // callback, no ACK) until the first promise resolves; then it is delivered and ACKed.
      server.setResource(endpoints("E", 1));
      const seen: string[] = [];
      let release = () => {};
      client.watch(testEndpointsType, "E", {
        onResourceChanged(result: ResourceResult<TestEndpoints>) {
          seen.push(result.ok ? describeEndpoints(result.resource) : result.error.kind);
          return new Promise<void>((resolve) => {
            release = resolve;
          });
        },
        onAmbientError: () => {},
      });
      await server.hooks.waitForRequest((r) => r.typeUrl === EDS && r.disposition === "ack");
      const mark = server.hooks.mark();
      server.setResource(endpoints("E", 2));
      const second = await server.hooks.waitForResponse((r) => r.typeUrl === EDS, { after: mark });
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toEqual(["E:1"]);
      expect(server.hooks.requests().filter((r) => r.responseNonce === second.nonce)).toEqual([]);
      release();
      await server.hooks.waitForRequest((r) => r.responseNonce === second.nonce && r.disposition === "ack");
      expect(seen).toEqual(["E:1", "E:2"]);
    });

    it("tells the watcher of an outage as ambient, and of its end", async () => {
      server.setResource(endpoints("E", 1));
      const w = recorder<TestEndpoints>(describeEndpoints);
      client.watch(testEndpointsType, "E", w);
      expect(await w.next(1)).toEqual(["resource:E:1"]);
      await server.stop();
      expect(await w.next(1)).toEqual(["ambient:UNAVAILABLE:connection"]);
      server.setResource(endpoints("E", 2));
      await server.start();
      // The reconnect comes after a backoff of about a second. A response that changes E ends the outage for E's
      // watcher by itself, the new E alone (@xdskit/xds-client's docs/decisions.md#the-watcher-api); a response of
      // another type (the wrapper's DPDS resource) may end it first, with `cleared`. Never the old E again.
      const events: string[] = [];
      const deadline = Date.now() + 10_000;
      while (!events.includes("resource:E:2") && Date.now() < deadline) {
        events.push(...(await w.next(1, deadline - Date.now())));
      }
      expect([["resource:E:2"], ["cleared", "resource:E:2"]]).toContainEqual(events);
    });

    it("reports names it cannot use to the watcher, never by throwing", async () => {
      const unknown = recorder<TestListener>(describeListener);
      const bad = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "xdstp://nowhere.example/envoy.config.listener.v3.Listener/L", unknown);
      client.watch(testListenerType, "xdstp:L", bad);
      expect(await unknown.next(1)).toEqual(["error:FAILED_PRECONDITION:unknown_authority"]);
      expect(await bad.next(1)).toEqual(["error:INVALID_ARGUMENT:invalid_name"]);
    });

    it("serves xdstp names of an authority without servers from the top-level servers", async () => {
      const xdstp = "xdstp://auth.example/envoy.config.listener.v3.Listener/L";
      server.setResource(listener(xdstp, "fed"));
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, xdstp, w);
      expect(await w.next(1)).toEqual([`resource:${xdstp}:fed`]);
    });

    it("keeps watches with different parameters apart", async () => {
      server.setResource(listener("L", "one"));
      const a = recorder<TestListener>(describeListener);
      const b = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", a, { dynamicParameters: { team: "a" } });
      client.watch(testListenerType, "L", b, { dynamicParameters: { team: "b" } });
      expect(await a.next(1)).toEqual(["resource:L:one"]);
      expect(await b.next(1)).toEqual(["resource:L:one"]);
      expect(csdsRows(client, LDS)).toEqual([`${name("L", { team: "a" })} ACKED`, `${name("L", { team: "b" })} ACKED`]);
    });

    it("tells a watch made after close that the client is closed", async () => {
      await client.close();
      const w = recorder<TestListener>(describeListener);
      client.watch(testListenerType, "L", w);
      expect(await w.next(1)).toEqual(["error:CANCELLED:internal"]);
    });

    it("exposes its bootstrap and switches", () => {
      expect(client.bootstrap.node.id).toBe(SUITE_NODE);
      expect(client.bootstrap.xdsServers[0]?.apiType).toBe(apiType);
      expect(client.features.dynamicParameters).toBe(true);
    });
  });
}
