// Connections over real HTTP/2 (docs/decisions.md#connect-xds-connections): a unary call that never reached a
// server is sent again (A6's transparent retry) when the server refuses its stream (REFUSED_STREAM) and when its
// connection goes (GOAWAY, a closed socket) while the server's SETTINGS_MAX_CONCURRENT_STREAMS kept it queued; a
// connection closes once no cluster has its address; reconnection follows gRPC's backoff (1 s, x1.6) and a
// connection attempt gets 20 s, on a virtual clock over real connection attempts.
import * as http2 from "node:http2";
import * as net from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { buildCluster, buildClusterLoadAssignment, buildListener, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { startBackend } from "./support/backends.js";
import { echoClient, otherClient, served, untilServedBy } from "./support/echo-client.js";
import { VirtualClock } from "./support/fake-helper.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { answerOk, startHttp2Backend, startSilentBackend } from "./support/hostile-backends.js";

/** Resolves once `condition` holds, checking after each turn of the event loop (at most 10 s). */
async function until(condition: () => boolean): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > 10_000) throw new Error("condition not met within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A value answered with `q:<x-value>`; a call with `x-hang` is never answered. */
function answeringBackend(name: string, settings: http2.Settings = {}) {
  const sessions: http2.ServerHttp2Session[] = [];
  const sockets: net.Socket[] = [];
  const seen: { value: string; session: number }[] = [];
  const backend = startHttp2Backend((stream, socket, headers) => {
    const session = stream.session as http2.ServerHttp2Session;
    if (!sessions.includes(session)) {
      sessions.push(session);
      sockets.push(socket);
    }
    seen.push({ value: String(headers["x-value"]), session: sessions.indexOf(session) });
    if (headers["x-hang"] !== undefined) return;
    answerOk(stream, toBinary(StringValueSchema, create(StringValueSchema, { value: `${name}:x` })));
  }, settings);
  return { backend, sessions, sockets, seen };
}

describe("connections", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let next = 0;
  const transports: XdsTransport[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  /** A listener of its own over one cluster of `addresses`; the transport's echo client. */
  function serve(addresses: readonly string[]) {
    const name = `conn-${next++}`;
    server.setResources(simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: addresses }]));
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    return { name, echo: echoClient(transport) };
  }

  const track = <T extends { close(): Promise<void> }>(closable: T): T => {
    closers.push(() => closable.close());
    return closable;
  };

  it("sends a call again, elsewhere, when the server refuses its stream (REFUSED_STREAM), with no retry policy", async () => {
    let refused = 0;
    const refusing = track(
      await startHttp2Backend((stream) => {
        refused++;
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      }),
    );
    const good = track(await startBackend("good"));
    const { echo } = serve([refusing.address, good.address]);
    await untilServedBy(echo, "good");
    // Round robin sends every other pick to the refusing backend; a call refused there goes out again, on the next
    // pick: the good backend. (Calls one at a time, so no other call takes that pick.)
    const names: string[] = [];
    for (let i = 0; i < 10; i++) names.push(await served(echo));
    expect(names).toEqual(Array(10).fill("good"));
    expect(refused).toBeGreaterThan(0);
  });

  for (const how of ["GOAWAY", "a closed socket"] as const) {
    it(`sends a call again when its connection goes (${how}) while SETTINGS_MAX_CONCURRENT_STREAMS kept it queued`, async () => {
      const q = answeringBackend("q", { maxConcurrentStreams: 1 });
      const backend = track(await q.backend);
      const { echo } = serve([backend.address]);
      // One call holds the only stream the backend allows; the next is queued, never sent.
      const held = served(echo, { headers: { "x-hang": "1", "x-value": "held" } }).catch((e) => e);
      await until(() => q.seen.length === 1);
      const queued = served(echo, { headers: { "x-value": "queued" } });
      if (how === "GOAWAY") q.sessions[0]!.goaway();
      else q.sockets[0]!.destroy();
      // Sent again on a new connection, where the backend answers it.
      expect(await queued).toBe("q");
      expect(q.seen).toEqual([
        { value: "held", session: 0 },
        { value: "queued", session: 1 },
      ]);
      // The held call had reached the backend: when its connection closed it failed, it was not sent again.
      if (how !== "GOAWAY") expect((await held).code).toBe(Code.Unavailable);
      else q.sockets[0]!.destroy();
      await held;
    });
  }

  it("closes a connection once no cluster has its address, not before", async () => {
    const [shared, a] = await Promise.all([startBackend("shared"), startBackend("a")]);
    track(shared);
    track(a);
    const name = `conn-${next++}`;
    const route = (service: string, cluster: string) => ({
      match: { pathSpecifier: { case: "prefix" as const, value: `/xdskit.test.${service}/` } },
      action: { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: cluster } } },
    });
    const assignment = (cluster: string, addresses: string[]) =>
      buildClusterLoadAssignment({ clusterName: cluster, localities: [{ zone: "z", endpoints: addresses }] });
    server.setResources([
      buildListener({ name, routeConfigName: `${name}-route` }),
      create(RouteConfigurationSchema, {
        name: `${name}-route`,
        virtualHosts: [{ name: "all", domains: ["*"], routes: [route("Echo", "echo-c"), route("Other", "other-c")] }],
      }),
      buildCluster({ name: "echo-c" }),
      buildCluster({ name: "other-c" }),
      assignment("echo-c", [shared.address]),
      assignment("other-c", [shared.address]),
    ]);
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    const echo = echoClient(transport);
    const other = otherClient(transport);
    expect(await served(echo)).toBe("shared");
    expect((await other.call({ value: "x" })).value).toBe("shared:x");
    expect(shared.sessions).toBe(1);
    // echo-c moves to a; other-c still has the shared address, so its one connection stays.
    server.setResource(assignment("echo-c", [a.address]));
    await untilServedBy(echo, "a");
    expect((await other.call({ value: "y" })).value).toBe("shared:y");
    expect([shared.sessions, shared.openSessions]).toEqual([1, 1]);
    // Now no cluster has it: the connection closes.
    server.setResource(assignment("other-c", [a.address]));
    await shared.untilNoSessions();
    expect((await other.call({ value: "z" })).value).toBe("a:z");
    expect(shared.sessions).toBe(1);
  });

  describe("on a virtual clock", () => {
    /** A transport whose timers run on `clock`, with backoff jitter 0 (draws of 0.5). */
    function serveOnClock(clock: VirtualClock, address: string): void {
      const name = `conn-${next++}`;
      server.setResources(simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: [address] }]));
      const transport = createXdsTransportWithInternals(
        { target: `xds:///${name}`, client },
        { clock, random: () => 0.5 },
      );
      transports.push(transport);
    }

    /**
     * A TCP server that closes every connection it accepts at once, recording the clock's time of each and the last
     * timer set by then (the attempt's failure sets the next one after it).
     */
    async function startRefusing(clock: VirtualClock) {
      const at: number[] = [];
      const lastTimer: number[] = [];
      const server = net.createServer((socket) => {
        at.push(clock.now());
        lastTimer.push(clock.lastTimerId);
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return {
        address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        at,
        lastTimer,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    }

    it("reconnects after 1 s, then 1.6 s, 2.56 s and 4.096 s after each attempt began", async () => {
      const clock = new VirtualClock();
      const refusing = track(await startRefusing(clock));
      serveOnClock(clock, refusing.address);
      for (let attempt = 1; attempt < 5; attempt++) {
        await until(() => refusing.at.length === attempt);
        // The failed attempt schedules the next one: run the clock to it.
        const mark = refusing.lastTimer[attempt - 1]!;
        await until(() => clock.pendingAfter(mark).length > 0);
        clock.advance(clock.pendingAfter(mark)[0]! - clock.now());
      }
      await until(() => refusing.at.length === 5);
      expect(refusing.at).toEqual([0, 1000, 2600, 5160, 9256]);
    });

    it("gives up a connection attempt that gets no SETTINGS after 20 s, then tries again at once", async () => {
      const clock = new VirtualClock();
      const silent = track(await startSilentBackend());
      serveOnClock(clock, silent.address);
      await until(() => silent.accepted === 1);
      const first = [...silent.sockets][0]!;
      const firstClosed = new Promise((resolve) => first.once("close", resolve));
      // The attempt's deadline is 20 s, not its 1 s backoff; it is still pending at 19.999 s.
      expect(clock.pendingAfter()).toContain(20_000);
      clock.advance(19_999);
      expect(clock.pendingAfter()).toContain(20_000);
      expect(first.destroyed).toBe(false);
      clock.advance(1);
      await firstClosed;
      // The backoff (1 s from the attempt's start) is long over: the next attempt starts at once, with a deadline
      // 20 s later.
      await until(() => silent.accepted === 2);
      expect(clock.now()).toBe(20_000);
      expect(clock.pendingAfter()).toContain(40_000);
    });
  });
});
