// What the client loads when first used (src/shared/lazy-module.ts) can fail to load, or still be loading when a response
// arrives: a failure reaches the watchers as a connection error (never an unhandled rejection or a throwing
// watch()), the next attempt loads again, and no response is decoded before its type's decoder is there.
// test/cold-start.test.ts checks, in a fresh Node on the build, what is and is not loaded.
import { Cluster_DiscoveryType, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/round_robin/v3/round_robin_pb";
import { describe, expect, it, onTestFinished } from "vitest";
import * as lazyTypes from "../src/client/builtin-types.js";
import { decoderLoading, lazyResourceType } from "../src/client/builtin-types.js";
import type { BootstrapConfig, ResourceType, XdsClientOptions } from "../src/index.js";
import { createXdsClientWithInternals, type XdsClientInternals } from "../src/internal.js";
import { loadProtocol, type ProtocolLoader } from "../src/protocol/protocol-loader.js";
import * as realTypes from "../src/resources/index.js";
import { loadOnce } from "../src/shared/lazy-module.js";
import { lazyTransportFactory } from "../src/transport/transport.js";
import { context, pack } from "./resources/context.js";
import { typedStruct } from "./resources/typed-struct.js";
import { createFakeServer } from "./support/fake-transport.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import { endpointsAny, type TestEndpoints, testEndpointsType } from "./support/test-types.js";
import { createVirtualClock } from "./support/virtual-clock.js";

const CLA = testEndpointsType.typeUrl;
const BOOTSTRAP: BootstrapConfig = {
  xds_servers: [{ server_uri: "primary:443", channel_creds: [{ type: "insecure" }] }],
  node: { id: "lazy-node" },
};

function client(options: Partial<XdsClientOptions>, internals: XdsClientInternals = {}) {
  const clock = createVirtualClock();
  const created = createXdsClientWithInternals(
    { bootstrap: BOOTSTRAP, env: {}, ...options },
    { clock, random: () => 0.5, ...internals },
  );
  onTestFinished(() => created.close());
  return { client: created, clock };
}

/** A type's names, as `lazyResourceType` takes them. */
const names = ({ typeUrl, typeName, allResourcesRequiredInSotW }: ResourceType<unknown>) => ({
  typeUrl,
  typeName,
  allResourcesRequiredInSotW,
});

/** Resolves once `predicate` holds, checked after each settled round of callbacks. */
async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await flush();
}

describe("a module that fails to load", () => {
  it("the transport: the watchers hear a connection error naming the load failure", async () => {
    const factory = lazyTransportFactory(() => Promise.reject(new Error("Cannot find module 'connect-node'")));
    const { client: c } = client({ transportFactory: factory });
    const watcher = recordingWatcher<TestEndpoints>();
    expect(() => c.watch(testEndpointsType, "cla-1", watcher)).not.toThrow();
    await until(() => watcher.events.length > 0);
    expect(summarize(watcher.take())).toEqual(["error:UNAVAILABLE:connection"]);
  });

  it("the transport: the message says what could not be loaded, and the next attempt loads again", async () => {
    const server = createFakeServer();
    let attempts = 0;
    const factory = lazyTransportFactory(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("Cannot find module 'connect-node'");
      return server.transportFactory;
    });
    const { client: c, clock } = client({ transportFactory: factory });
    const watcher = recordingWatcher<TestEndpoints>();
    c.watch(testEndpointsType, "cla-1", watcher);
    await until(() => watcher.events.length > 0);
    const [failure] = watcher.take();
    expect(failure?.kind === "error" && failure.error.message).toContain(
      "the xDS transport could not be loaded: Cannot find module 'connect-node'",
    );
    // The retry after backoff loads the transport and gets the resource.
    await clock.advance(10_000);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: CLA, versionInfo: "1", nonce: "1", resources: [endpointsAny("cla-1")] });
    expect(attempts).toBe(2);
    expect(summarize(watcher.take())).toEqual(["resource:1:cla-1"]);
  });

  it("the protocol module: no stream opens, the watchers hear a connection error, the retry loads it", async () => {
    const server = createFakeServer();
    let attempts = 0;
    const failingOnce: ProtocolLoader = () => {
      attempts += 1;
      return attempts === 1 ? Promise.reject(new Error("Cannot find module 'protocol.js'")) : loadProtocol();
    };
    const { client: c, clock } = client({ transportFactory: server.transportFactory }, { loadProtocol: failingOnce });
    const watcher = recordingWatcher<TestEndpoints>();
    expect(() => c.watch(testEndpointsType, "cla-1", watcher)).not.toThrow();
    await until(() => watcher.events.length > 0);
    const [failure] = watcher.take();
    expect(failure?.kind === "error" && failure.error.kind).toBe("connection");
    expect(failure?.kind === "error" && failure.error.message).toContain("Cannot find module 'protocol.js'");
    expect(server.streams).toHaveLength(0);
    await clock.advance(10_000);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: CLA, versionInfo: "1", nonce: "1", resources: [endpointsAny("cla-1")] });
    expect(summarize(watcher.take())).toEqual(["resource:1:cla-1"]);
  });
});

describe("a type whose decoder loads lazily", () => {
  /**
   * A lazy type over testEndpointsType whose load the test settles (once it failed, every later load fails at once);
   * what happened, in order, in `log`.
   */
  function lazyEndpoints() {
    const log: string[] = [];
    let failure: Error | undefined;
    let settle: { resolve: (type: ResourceType<TestEndpoints>) => void; reject: (error: Error) => void } | undefined;
    const counted: ResourceType<TestEndpoints> = {
      ...testEndpointsType,
      decode(resource, context) {
        log.push("decoded");
        return testEndpointsType.decode(resource, context);
      },
    };
    const type = lazyResourceType<TestEndpoints>(
      names(testEndpointsType),
      () =>
        new Promise((resolve, reject) => {
          log.push("load started");
          if (failure !== undefined) reject(failure);
          else settle = { resolve, reject };
        }),
      () => {
        // Only a decode before the load settled gets here: the client must never do that.
        log.push("loaded synchronously");
        return counted;
      },
    );
    return {
      type,
      log,
      resolve() {
        log.push("loaded");
        settle?.resolve(counted);
      },
      reject(error: Error) {
        log.push("failed");
        failure = error;
        settle?.reject(error);
      },
    };
  }

  /** A watch of cla-1 with a lazy type, once its request is on the stream and its decoder is loading. */
  async function watchWhileLoading() {
    const server = createFakeServer();
    const { client: c } = client({ transportFactory: server.transportFactory });
    const lazy = lazyEndpoints();
    const watcher = recordingWatcher<TestEndpoints>();
    c.watch(lazy.type, "cla-1", watcher);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await until(() => lazy.log.includes("load started"));
    return { stream, lazy, watcher };
  }

  it("a response that arrives while the decoder loads is decoded once it is loaded", async () => {
    const { stream, lazy, watcher } = await watchWhileLoading();
    const ack = stream.exchange({ typeUrl: CLA, versionInfo: "1", nonce: "1", resources: [endpointsAny("cla-1")] });
    // Rounds of callbacks in which a decode without the wait would happen.
    for (let i = 0; i < 5; i++) await flush();
    lazy.resolve();
    expect((await ack).nack).toBe(false);
    expect(summarize(watcher.take())).toEqual(["resource:1:cla-1"]);
    expect(lazy.log).toEqual(["load started", "loaded", "decoded"]);
  });

  it("decode called directly when the decoder cannot be loaded returns the failure (decoders never throw)", () => {
    const type = lazyResourceType<TestEndpoints>(
      names(testEndpointsType),
      () => Promise.reject(new Error("not used")),
      () => {
        throw new Error("Cannot find module 'endpoint.js'");
      },
    );
    expect(type.decode(endpointsAny("cla-1"), context)).toEqual({
      ok: false,
      error: "the TestEndpoints decoder could not be loaded: Cannot find module 'endpoint.js'",
    });
  });

  it("a decoder that fails to load fails the call as a connection error; nothing is decoded without it", async () => {
    const { stream, lazy, watcher } = await watchWhileLoading();
    stream.respond({ typeUrl: CLA, versionInfo: "1", nonce: "1", resources: [endpointsAny("cla-1")] });
    lazy.reject(new Error("Cannot find module 'endpoint.js'"));
    await until(() => watcher.events.length > 0);
    expect(summarize(watcher.take())).toEqual(["error:UNAVAILABLE:connection"]);
    expect(lazy.log).not.toContain("decoded");
    expect(lazy.log).not.toContain("loaded synchronously");
  });
});

describe("the built-in types as the package exports them", () => {
  it("carry the names of the types they load", () => {
    const pairs = [
      [lazyTypes.clusterResourceType, realTypes.clusterResourceType],
      [lazyTypes.createClusterResourceType(), realTypes.createClusterResourceType()],
      [lazyTypes.endpointResourceType, realTypes.endpointResourceType],
      [lazyTypes.listenerResourceType, realTypes.listenerResourceType],
      [lazyTypes.routeConfigurationResourceType, realTypes.routeConfigurationResourceType],
    ] as const;
    for (const [lazy, real] of pairs) expect(names(lazy as ResourceType<unknown>)).toEqual(names(real));
  });

  it("createClusterResourceType hands its options to the type it loads", async () => {
    const cluster = pack(ClusterSchema, {
      name: "cluster-a",
      clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
      edsClusterConfig: { edsConfig: { configSourceSpecifier: { case: "ads", value: {} } }, serviceName: "eds-a" },
      loadBalancingPolicy: {
        policies: [typedStruct("type.googleapis.com/test.MyPolicy", { n: 2 }), pack(RoundRobinSchema, {})].map(
          (typedConfig) => ({ typedExtensionConfig: { name: "p", typedConfig } }),
        ),
      },
    });
    const options = { customLbPolicies: ["test.MyPolicy"] };
    const lazy = lazyTypes.createClusterResourceType(options);
    await decoderLoading(lazy as ResourceType<unknown>);
    const custom = lazy.decode(cluster, context);
    expect(custom.ok).toBe(true);
    expect(custom).toEqual(realTypes.createClusterResourceType(options).decode(cluster, context));
    // The option matters: without it the same cluster decodes to another policy.
    expect(custom).not.toEqual(lazyTypes.clusterResourceType.decode(cluster, context));
  });
});

describe("loadOnce", () => {
  it("runs a load once while it runs and once it succeeded, again after a failure, and pending() starts nothing", async () => {
    let runs = 0;
    let fail = true;
    const load = loadOnce(async () => {
      runs += 1;
      if (fail) throw new Error(`failed ${runs}`);
      return runs;
    });
    expect(load.pending()).toBeUndefined();
    expect(runs).toBe(0);
    const first = load();
    expect(load()).toBe(first);
    await expect(first).rejects.toThrow("failed 1");
    expect(load.pending()).toBeUndefined();
    fail = false;
    await expect(load()).resolves.toBe(2);
    await expect(load()).resolves.toBe(2);
    expect(load.pending()).toBe(load());
    expect(runs).toBe(2);
  });
});
