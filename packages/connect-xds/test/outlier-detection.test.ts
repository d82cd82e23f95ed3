// A50's success-rate algorithm over real HTTP/2 (the failure-percentage one is off): five backends, one failing
// every call. With ten calls per backend in an interval, the success rates are 1, 1, 1, 1 and 0: mean 0.8, standard
// deviation 0.4, so the threshold is 0.8 - 1.9 x 0.4 = 0.04 and only the failing backend is below it.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { OutlierDetectionSchema } from "@xdskit/protos/envoy/config/cluster/v3/outlier_detection_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { EchoService } from "./support/echo-service.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { seconds } from "./support/policy-config.js";

describe("outlier detection over HTTP/2 (A50)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];
  let transport: XdsTransport;
  let failed = 0;
  const failing: Interceptor = () => async () => {
    failed++;
    throw new ConnectError("backend is broken", Code.Unavailable);
  };

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    backends = await Promise.all([
      ...["a", "b", "c", "d"].map((name) => startBackend(name)),
      startBackend("bad", { interceptors: [failing] }),
    ]);
  });
  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all(backends.map((b) => b.close()));
    await server.close();
  });

  it("success rate: ejects the backend whose success rate is below mean - stdev x 1.9; it gets no calls", async () => {
    const resources = simpleSnapshot("sr", "sr-cluster", [{ zone: "z1", endpoints: backends.map((b) => b.address) }]);
    (resources[2] as Cluster).outlierDetection = create(OutlierDetectionSchema, {
      // Wide enough that a loaded machine completes the request volume on every backend in one interval.
      interval: seconds(0.5),
      baseEjectionTime: seconds(30),
      maxEjectionPercent: 50,
      enforcingSuccessRate: 100,
      successRateMinimumHosts: 5,
      successRateRequestVolume: 5,
      enforcingFailurePercentage: 0,
    });
    server.setSnapshot(resources);
    transport = createXdsTransport({ target: "xds:///sr", client });
    const echo = createClient(EchoService, transport) as unknown as {
      unary(request: { value: string }): Promise<{ value: string }>;
    };
    const call = () =>
      echo.unary({ value: "x" }).then(
        (r) => r.value.split(":")[0] as string,
        () => "bad",
      );
    // Blocks of 50 calls until one never reaches "bad": an interval has seen the failures.
    let block: string[] = [];
    for (let round = 0; round < 40; round++) {
      block = [];
      for (let i = 0; i < 50; i++) block.push(await call());
      if (!block.includes("bad")) break;
    }
    expect(block).not.toContain("bad");
    expect(new Set(block)).toEqual(new Set(["a", "b", "c", "d"]));
    expect(failed).toBeGreaterThanOrEqual(5);
  });
});
