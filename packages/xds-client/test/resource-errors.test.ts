// TP3 `resource_errors` and deletions under A88 and legacy A53 (conformance 25-36), with CSDS and metrics.
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { describe, expect, it } from "vitest";
import { resourceError } from "./support/fake-transport.js";
import { NODE_ID, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import {
  endpointsAny,
  listenerAny,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
} from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const EDS = testEndpointsType.typeUrl;

const started = async (options?: Parameters<typeof setup>[0]) => setup(options);

function csds(client: ReturnType<typeof setup>["client"]) {
  return client.dumpResources().genericXdsConfigs.map((c) => ({
    status: ClientResourceStatus[c.clientStatus],
    hasConfig: c.xdsConfig !== undefined,
    error: c.errorState ? `${c.errorState.versionInfo}:${c.errorState.details}` : undefined,
  }));
}

/** Watches `name` of `type`, answers with a resource (if `cached`), and returns the stream and watcher. */
async function watched<T>(
  t: Awaited<ReturnType<typeof started>>,
  type: typeof testListenerType | typeof testEndpointsType,
  name: string,
  cached: boolean,
) {
  const w = recordingWatcher<T>();
  t.client.watch(type as never, name, w as never);
  const stream = await t.server.nextStream();
  await stream.nextRequest();
  if (cached) {
    const any = type === testListenerType ? listenerAny(name) : endpointsAny(name);
    await stream.exchange({ typeUrl: type.typeUrl, versionInfo: "1", nonce: "n1", resources: [any] });
    await flush();
    w.take();
  }
  return { w, stream };
}

describe("TP3 resource_errors", () => {
  it("turns NOT_FOUND into an immediate does-not-exist, cancels the timer, ACKs, and shows RECEIVED_ERROR", async () => {
    const t = await started();
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
    const ack = await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resourceErrors: [resourceError("A", 5, "no such cluster")],
    });
    expect(ack.errorDetail).toBeUndefined();
    expect(ack.versionInfo).toBe("1");
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:NOT_FOUND:does_not_exist"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toBe(
      `[NOT_FOUND] resource A does not exist (server: no such cluster) (node ID: ${NODE_ID})`,
    );
    expect(t.clock.pending()).toEqual([]);
    expect(csds(t.client)).toEqual([{ status: "RECEIVED_ERROR", hasConfig: false, error: "1:no such cluster" }]);
    expect(t.metrics.counter("grpc.xds_client.resource_updates_invalid")).toBe(1);
  });

  it("gives an uncached watcher PERMISSION_DENIED with the server's message", async () => {
    const t = await started();
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "3",
      nonce: "n1",
      resourceErrors: [resourceError("A", 7, "not yours")],
    });
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:PERMISSION_DENIED:server_error"]);
    expect(events[0]?.kind === "error" && events[0].error.code).toBe(7);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain("not yours");
    const [entry] = t.client.dumpResources().genericXdsConfigs;
    expect(entry?.errorState?.versionInfo).toBe("3");
    expect(entry?.errorState?.lastUpdateAttempt).toBeDefined();
  });

  it("keeps a cached copy on PERMISSION_DENIED and reports it as ambient", async () => {
    const t = await started();
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("A", 7, "revoked")],
    });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:PERMISSION_DENIED:server_error"]);
    expect(csds(t.client)).toEqual([{ status: "RECEIVED_ERROR", hasConfig: true, error: "2:revoked" }]);
    expect(t.metrics.gauges().get("resources{#old,received_error_but_cached}")).toBe(1);
  });

  it("drops the cached copy on PERMISSION_DENIED with fail_on_data_errors", async () => {
    const t = await started({ serverFeatures: ["fail_on_data_errors"] });
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("A", 7, "revoked")],
    });
    await flush();
    expect(summarize(w.take())).toEqual(["error:PERMISSION_DENIED:server_error"]);
    expect(t.metrics.gauges().get("resources{#old,received_error}")).toBe(1);
  });

  it.each([
    [14, "UNAVAILABLE"],
    [13, "INTERNAL"],
    [2, "UNKNOWN"],
  ])("treats code %i as transient: ambient, cache kept even with fail_on_data_errors", async (code, name) => {
    const t = await started({ serverFeatures: ["fail_on_data_errors"] });
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("A", code, "flaky")],
    });
    await flush();
    expect(summarize(w.take())).toEqual([`ambient:${name}:server_error`]);
    expect(csds(t.client)[0]?.hasConfig).toBe(true);
  });

  it("NACKs a resource error with an empty name or an OK status and touches no watcher", async () => {
    const t = await started();
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
    const nack = await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("", 5, "who"), resourceError("A", 0, "fine")],
    });
    expect(nack.errorDetail?.message).toContain("resource_errors[0]: resource name is empty");
    expect(nack.errorDetail?.message).toContain("resource_errors[1]: A: status is OK");
    await flush();
    expect(w.take()).toEqual([]);
    expect(csds(t.client)[0]?.status).toBe("ACKED");
  });

  it("clears RECEIVED_ERROR when the resource itself arrives", async () => {
    const t = await started();
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resourceErrors: [resourceError("A", 14, "later")],
    });
    await stream.exchange({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("A")] });
    await flush();
    expect(summarize(w.take())).toEqual(["error:UNAVAILABLE:server_error", "resource:2:A"]);
    expect(csds(t.client)).toEqual([{ status: "ACKED", hasConfig: true, error: undefined }]);
  });

  it("ignores resource_errors when A88 is off", async () => {
    const t = await started({ features: { dataErrorHandling: false } });
    const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resourceErrors: [resourceError("A", 5, "gone")],
    });
    await flush();
    expect(w.take()).toEqual([]);
    expect(csds(t.client)[0]?.status).toBe("REQUESTED");
  });
});

describe("deletion of LDS/CDS resources in SotW", () => {
  it("keeps the resource by default (A88) and reports an ambient NOT_FOUND with DOES_NOT_EXIST in CSDS", async () => {
    const t = await started();
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    t.client.watch(testListenerType, "B", recordingWatcher());
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [listenerAny("B")] });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
    expect(csds(t.client)[0]).toEqual({ status: "DOES_NOT_EXIST", hasConfig: true, error: undefined });
    expect(t.metrics.gauges().get("resources{#old,does_not_exist_but_cached}")).toBe(1);
  });

  it("drops the resource with fail_on_data_errors, and a new watcher gets does-not-exist at once", async () => {
    const t = await started({ serverFeatures: ["fail_on_data_errors"] });
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [] });
    await flush();
    expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    const late = recordingWatcher<TestListener>();
    t.client.watch(testListenerType, "A", late);
    await flush();
    expect(summarize(late.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
  });

  it("delivers the resource again when it reappears", async () => {
    const t = await started();
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [] });
    await stream.exchange({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: [listenerAny("A", "changed")] });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:NOT_FOUND:does_not_exist", "resource:3:A"]);
    expect(csds(t.client)[0]?.status).toBe("ACKED");
  });

  it("legacy mode: without ignore_resource_deletion a deletion drops the resource", async () => {
    const t = await started({ features: { dataErrorHandling: false } });
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [] });
    await flush();
    expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
  });

  it("legacy mode: ignore_resource_deletion keeps the resource and tells nobody", async () => {
    const t = await started({ features: { dataErrorHandling: false }, serverFeatures: ["ignore_resource_deletion"] });
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [] });
    await flush();
    expect(w.take()).toEqual([]);
    expect(csds(t.client)[0]).toMatchObject({ status: "ACKED", hasConfig: true });
  });

  it("counts a resource error as seen, so it is not also a deletion", async () => {
    const t = await started();
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("A", 14, "busy")],
    });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:UNAVAILABLE:server_error"]);
    expect(csds(t.client)[0]?.status).toBe("RECEIVED_ERROR");
  });
});
