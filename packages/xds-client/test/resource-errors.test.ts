// TP3 `resource_errors` (SotW field 7, delta field 9) and deletions under A88 and legacy A53, in both protocols, with
// CSDS and metrics after each step. A deletion is an LDS/CDS SotW response that omits a cached resource, or a delta
// removal.
import { describe, expect, it } from "vitest";
import { type FakeStream, type Protocol, resourceError } from "./support/fake-transport.js";
import { csdsRows, NODE_ID, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import {
  endpointsAny,
  listenerAny,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
  typeName,
  wrappedAny as wrapped,
} from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const EDS = testEndpointsType.typeUrl;

type Harness = ReturnType<typeof setup>;

/** Watches `name` of `type`, answers with a resource (if `cached`), and returns the stream and watcher. */
async function watched<T>(
  t: Harness,
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

/** The server deletes `name`: SotW omits it from a full LDS response, delta removes it. */
function deleteListener(stream: FakeStream, version: string, name: string, keep: string[] = []) {
  return stream.exchange({
    typeUrl: LDS,
    versionInfo: version,
    nonce: `n${version}`,
    resources: keep.map((k) => listenerAny(k)),
    removed: [name],
  });
}

describe.each(["sotw", "delta"] as const)("%s ADS", (protocol: Protocol) => {
  const started = (options: Parameters<typeof setup>[0] = {}) => setup({ protocol, ...options });

  describe("TP3 resource_errors", () => {
    it("turns NOT_FOUND into an immediate does-not-exist, cancels the timer, ACKs, and shows RECEIVED_ERROR", async () => {
      const t = started();
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
      const ack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resourceErrors: [resourceError("A", 5, "no such cluster")],
      });
      expect(ack.nack).toBe(false);
      expect(ack.nonce).toBe("n1");
      await flush();
      const events = w.take();
      expect(summarize(events)).toEqual(["error:NOT_FOUND:does_not_exist"]);
      expect(events[0]?.kind === "error" && events[0].error.message).toBe(
        `[NOT_FOUND] resource A does not exist (server: no such cluster) (node ID: ${NODE_ID})`,
      );
      expect(t.clock.pending()).toEqual([]);
      expect(csdsRows(t.client)).toEqual([
        { name: "A", status: "RECEIVED_ERROR", version: "", hasConfig: false, error: "1|no such cluster|time" },
      ]);
      expect(
        t.metrics.counter("grpc.xds_client.resource_updates_invalid", { "grpc.xds.resource_type": typeName(EDS) }),
      ).toBe(1);
      expect(t.metrics.gauges().get("resources{#old,received_error}")).toBe(1);
    });

    it("gives an uncached watcher PERMISSION_DENIED with the server's message", async () => {
      const t = started();
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
      expect(events[0]?.kind === "error" && events[0].error.message).toBe(
        `[PERMISSION_DENIED] xDS server error for resource A: not yours (node ID: ${NODE_ID})`,
      );
      expect(csdsRows(t.client)[0]?.error).toBe("3|not yours|time");
    });

    it("keeps a cached copy on PERMISSION_DENIED and reports it as ambient", async () => {
      const t = started();
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [resourceError("A", 7, "revoked")],
      });
      await flush();
      expect(summarize(w.take())).toEqual(["ambient:PERMISSION_DENIED:server_error"]);
      expect(csdsRows(t.client)).toEqual([
        { name: "A", status: "RECEIVED_ERROR", version: "1", hasConfig: true, error: "2|revoked|time" },
      ]);
      expect(t.metrics.gauges().get("resources{#old,received_error_but_cached}")).toBe(1);
    });

    it("drops the cached copy on PERMISSION_DENIED with fail_on_data_errors", async () => {
      const t = started({ serverFeatures: ["fail_on_data_errors"] });
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [resourceError("A", 7, "revoked")],
      });
      await flush();
      expect(summarize(w.take())).toEqual(["error:PERMISSION_DENIED:server_error"]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "RECEIVED_ERROR", hasConfig: false });
      expect(t.metrics.gauges().get("resources{#old,received_error}")).toBe(1);
    });

    it.each([
      [14, "UNAVAILABLE"],
      [13, "INTERNAL"],
      [2, "UNKNOWN"],
      [10, "ABORTED"],
    ])("treats code %i as transient: ambient, cache kept even with fail_on_data_errors", async (code, name) => {
      const t = started({ serverFeatures: ["fail_on_data_errors"] });
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [resourceError("A", code, "flaky")],
      });
      await flush();
      expect(summarize(w.take())).toEqual([`ambient:${name}:server_error`]);
      expect(csdsRows(t.client)[0]?.hasConfig).toBe(true);
    });

    it.each([99, -1, 17])("turns status code %i, outside gRPC's range, into UNKNOWN", async (code) => {
      const t = started();
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
      const ack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resourceErrors: [resourceError("A", code, "odd")],
      });
      expect(ack.nack).toBe(false);
      await flush();
      const events = w.take();
      expect(summarize(events)).toEqual(["error:UNKNOWN:server_error"]);
      expect(events[0]?.kind === "error" && events[0].error.code).toBe(2);
    });

    it("NACKs a resource error with an empty name or an OK status and touches no watcher", async () => {
      const t = started();
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
      const nack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [resourceError("", 5, "who"), resourceError("A", 0, "fine")],
      });
      expect(nack.errorDetail?.message).toBe(
        `xDS response validation errors: [resource_errors[0]: resource name is empty; resource_errors[1]: A: status is OK] (node ID: ${NODE_ID})`,
      );
      await flush();
      expect(w.take()).toEqual([]);
      expect(csdsRows(t.client)[0]?.status).toBe("ACKED");
    });

    it("clears RECEIVED_ERROR when the resource itself arrives", async () => {
      const t = started();
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
      expect(csdsRows(t.client)).toEqual([
        { name: "A", status: "ACKED", version: "2", hasConfig: true, error: undefined },
      ]);
    });

    it("signals the end of an ambient server error when the same resource arrives again", async () => {
      const t = started();
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", true);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [resourceError("A", 14, "busy")],
      });
      await stream.exchange({ typeUrl: EDS, versionInfo: "3", nonce: "n3", resources: [endpointsAny("A")] });
      await flush();
      expect(summarize(w.take())).toEqual(["ambient:UNAVAILABLE:server_error", "cleared"]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "ACKED", version: "3", error: undefined });
    });

    it("ignores resource_errors when A88 is off", async () => {
      const t = started({ features: { dataErrorHandling: false } });
      const { w, stream } = await watched<TestEndpoints>(t, testEndpointsType, "A", false);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resourceErrors: [resourceError("A", 5, "gone")],
      });
      await flush();
      expect(w.take()).toEqual([]);
      expect(csdsRows(t.client)[0]?.status).toBe("REQUESTED");
    });
  });

  describe("deletion", () => {
    it("keeps the resource by default (A88) and reports an ambient NOT_FOUND with DOES_NOT_EXIST in CSDS", async () => {
      const t = started();
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      t.client.watch(testListenerType, "B", recordingWatcher());
      await stream.nextRequest();
      await deleteListener(stream, "2", "A", ["B"]);
      await flush();
      const events = w.take();
      expect(summarize(events)).toEqual(["ambient:NOT_FOUND:does_not_exist"]);
      expect(events[0]?.kind === "ambient" && events[0].error.message).toBe(
        `[NOT_FOUND] resource A was removed by the xDS server (version 2) (node ID: ${NODE_ID})`,
      );
      expect(csdsRows(t.client)[0]).toEqual({
        name: "A",
        status: "DOES_NOT_EXIST",
        version: "1",
        hasConfig: true,
        error: "2|resource A was removed by the xDS server (version 2)|time",
      });
      expect(t.metrics.gauges().get("resources{#old,does_not_exist_but_cached}")).toBe(1);
    });

    it("replaces an earlier NACK's error state with the deletion's", async () => {
      const t = started();
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      const bad = { typeUrl: LDS, versionInfo: "2", nonce: "n2" };
      await stream.exchange({ ...bad, resources: [wrapped("A", listenerAny("bad"))] });
      expect(csdsRows(t.client)[0]?.error).toBe("2|name: starts with bad|time");
      await deleteListener(stream, "3", "A");
      await flush();
      expect(summarize(w.take())).toEqual(["ambient:INVALID_ARGUMENT:nacked", "ambient:NOT_FOUND:does_not_exist"]);
      expect(csdsRows(t.client)[0]).toMatchObject({
        status: "DOES_NOT_EXIST",
        error: "3|resource A was removed by the xDS server (version 3)|time",
      });
      // The same invalid resource as before is news again after the deletion.
      await stream.exchange({ ...bad, nonce: "n4", resources: [wrapped("A", listenerAny("bad"))] });
      await flush();
      expect(summarize(w.take())).toEqual(["ambient:INVALID_ARGUMENT:nacked"]);
    });

    it("drops the resource with fail_on_data_errors, and a new watcher gets does-not-exist at once", async () => {
      const t = started({ serverFeatures: ["fail_on_data_errors"] });
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      await deleteListener(stream, "2", "A");
      await flush();
      expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
      const late = recordingWatcher<TestListener>();
      t.client.watch(testListenerType, "A", late);
      await flush();
      expect(summarize(late.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "DOES_NOT_EXIST", hasConfig: false });
      expect(t.metrics.gauges().get("resources{#old,does_not_exist}")).toBe(1);
    });

    it("delivers the resource again when it reappears", async () => {
      const t = started();
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      await deleteListener(stream, "2", "A");
      await stream.exchange({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: [listenerAny("A", "changed")] });
      await flush();
      expect(summarize(w.take())).toEqual(["ambient:NOT_FOUND:does_not_exist", "resource:3:A"]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "ACKED", error: undefined });
    });

    it("legacy mode: without ignore_resource_deletion a deletion drops the resource", async () => {
      const t = started({ features: { dataErrorHandling: false } });
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      await deleteListener(stream, "2", "A");
      await flush();
      expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    });

    it("legacy mode: a resource back after an ignored deletion reaches every watcher and ends the ignored deletion (scenario 35)", async () => {
      // Steps: two watchers of A (version 1); the server deletes A (ignored: warning); A comes back changed (version
      // 3): both watchers get it, and the INFO line says the ignored deletion is over; a second deletion is ignored
      // and warned about again (the flag was cleared); A comes back with the same bytes: nobody is told, the INFO
      // line again.
      const lines: string[] = [];
      const logger = {
        error: (m: string) => lines.push(`error ${m}`),
        warn: (m: string) => lines.push(`warn ${m}`),
        info: (m: string) => lines.push(`info ${m}`),
        debug: () => {},
      };
      const t = started({
        features: { dataErrorHandling: false },
        serverFeatures: ["ignore_resource_deletion"],
        logger,
      });
      const w1 = recordingWatcher<TestListener>();
      const w2 = recordingWatcher<TestListener>({ clears: false });
      t.client.watch(testListenerType, "A", w1);
      t.client.watch(testListenerType, "A", w2);
      const stream = await t.server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      await flush();
      expect([summarize(w1.take()), summarize(w2.take())]).toEqual([["resource:1:A"], ["resource:1:A"]]);
      const ignored = () => lines.filter((l) => /ignoring the deletion of A/.test(l));
      const back = () => lines.filter((l) => l.endsWith("resource A is back; the ignored deletion is over"));
      await deleteListener(stream, "2", "A");
      await flush();
      expect([w1.take(), w2.take(), ignored().length, back().length]).toEqual([[], [], 1, 0]);
      expect(ignored()[0]).toMatch(/^warn /);
      await stream.exchange({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: [listenerAny("A", "v3")] });
      await flush();
      expect([summarize(w1.take()), summarize(w2.take())]).toEqual([["resource:3:A"], ["resource:3:A"]]);
      expect(back()).toEqual(["info [xds-client] resource A is back; the ignored deletion is over"]);
      await deleteListener(stream, "4", "A");
      await flush();
      expect([w1.take(), w2.take(), ignored().length]).toEqual([[], [], 2]);
      await stream.exchange({ typeUrl: LDS, versionInfo: "5", nonce: "n5", resources: [listenerAny("A", "v3")] });
      await flush();
      expect([w1.take(), w2.take(), back().length]).toEqual([[], [], 2]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "ACKED", version: "5", hasConfig: true });
      expect(lines.filter((l) => l.startsWith("error"))).toEqual([]);
    });

    it("legacy mode: ignore_resource_deletion keeps the resource and tells nobody", async () => {
      const t = started({ features: { dataErrorHandling: false }, serverFeatures: ["ignore_resource_deletion"] });
      const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
      await deleteListener(stream, "2", "A");
      await flush();
      expect(w.take()).toEqual([]);
      expect(csdsRows(t.client)[0]).toMatchObject({ status: "ACKED", hasConfig: true });
    });
  });
});

describe("sotw ADS: deletion by omission", () => {
  it("counts a resource error as seen in its own response, so it is not also a deletion", async () => {
    const t = setup();
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "2",
      nonce: "n2",
      resourceErrors: [resourceError("A", 14, "busy")],
    });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:UNAVAILABLE:server_error"]);
    expect(csdsRows(t.client)[0]?.status).toBe("RECEIVED_ERROR");
  });

  it("keeps a resource in RECEIVED_ERROR when later responses omit it (the server sends an error once)", async () => {
    const t = setup();
    const { w, stream } = await watched<TestListener>(t, testListenerType, "A", true);
    t.client.watch(testListenerType, "B", recordingWatcher());
    await stream.nextRequest();
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "2",
      nonce: "n2",
      resources: [listenerAny("B")],
      resourceErrors: [resourceError("A", 14, "busy")],
    });
    await stream.exchange({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: [listenerAny("B", "new")] });
    await flush();
    expect(summarize(w.take())).toEqual(["ambient:UNAVAILABLE:server_error"]);
    expect(csdsRows(t.client)[0]).toMatchObject({ name: "A", status: "RECEIVED_ERROR", error: "2|busy|time" });
  });
});
