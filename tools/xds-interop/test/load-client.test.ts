// The in-process test client: a block counts the next N RPCs *sent* after it was asked for, whatever order they
// complete in; accumulated stats and --fail_on_failed_rpcs count what the document says. The client under it is a
// fake that answers from a script, so every count is known.
import { describe, expect, test } from "vitest";
import type { CallOutcome, InteropClient, RpcMethod } from "../src/client-adapter.js";
import { startLoadClient } from "../src/load-client.js";

interface FakeClient extends InteropClient {
  /** RPCs sent so far. */
  readonly sent: number;
}

/** RPC number i (from 0) is answered by `answer(i, method)` after `delayMs(i)`. */
function fakeClient(answer: (i: number, method: RpcMethod) => CallOutcome, delayMs: (i: number) => number): FakeClient {
  let sent = 0;
  return {
    get sent() {
      return sent;
    },
    call(method) {
      const i = sent++;
      return new Promise((resolve) => setTimeout(() => resolve(answer(i, method)), delayMs(i)));
    },
    async close() {},
  };
}

const peerOf = (i: number) => `backend-${i % 3}`;

describe("the load client", () => {
  test("a block is the next N RPCs sent, counted when each completes, even out of order", async () => {
    // Every other RPC takes longer, so completions interleave differently from sends.
    const client = fakeClient(
      (i) => ({ ok: true, code: 0, peer: peerOf(i) }),
      (i) => (i % 2 === 0 ? 30 : 1),
    );
    const load = startLoadClient({ client, qps: 500, config: { types: ["UnaryCall"], timeoutMs: 1000 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const first = client.sent;
    const stats = await load.stats(31, 5000);
    await load.stop();
    const expected: Record<string, number> = {};
    for (let i = first; i < first + 31; i++) expected[peerOf(i)] = (expected[peerOf(i)] ?? 0) + 1;
    expect(stats).toEqual({
      rpcsByPeer: expected,
      rpcsByMethod: { UnaryCall: expected },
      numFailures: 0,
      failureCodes: {},
      complete: true,
    });
  });

  test("counts failures by code and per method, and RPCs that failed after the first success", async () => {
    // RPCs 0-2 fail (before any success), 3 succeeds, then every fourth fails with UNAVAILABLE.
    const answer = (i: number): CallOutcome =>
      i < 3 || (i > 3 && i % 4 === 0) ? { ok: false, code: 14 } : { ok: true, code: 0, peer: "a" };
    const client = fakeClient(answer, () => 0);
    const load = startLoadClient({ client, qps: 500, config: { types: ["UnaryCall", "EmptyCall"], timeoutMs: 1000 } });
    const stats = await load.stats(40, 5000);
    await load.stop();
    expect(stats.numFailures + (stats.rpcsByPeer.a ?? 0)).toBe(40);
    expect(stats.failureCodes).toEqual(stats.numFailures > 0 ? { "14": stats.numFailures } : {});
    expect(Object.keys(stats.rpcsByMethod).sort()).toEqual(["EmptyCall", "UnaryCall"]);

    const sent = client.sent;
    const failed = Array.from({ length: sent }, (_, i) => i).filter((i) => !answer(i).ok);
    const accumulated = load.accumulated();
    expect((accumulated.rpcsStarted.UnaryCall ?? 0) + (accumulated.rpcsStarted.EmptyCall ?? 0)).toBe(sent);
    const completed = (method: RpcMethod) => Object.values(accumulated.result[method] ?? {}).reduce((a, b) => a + b, 0);
    expect(completed("UnaryCall") + completed("EmptyCall")).toBe(sent);
    expect(accumulated.failuresAfterFirstSuccess).toBe(failed.filter((i) => i > 3).length);
  });

  test("with maxInFlight, ticks that would exceed it are skipped, not sent later", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const inner = fakeClient(
      () => ({ ok: true, code: 0, peer: "a" }),
      () => 100,
    );
    const client: FakeClient = {
      get sent() {
        return inner.sent;
      },
      async call(method, options) {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        const outcome = await inner.call(method, options);
        inFlight--;
        return outcome;
      },
      close: () => inner.close(),
    };
    const load = startLoadClient({
      client,
      qps: 1000,
      maxInFlight: 4,
      config: { types: ["UnaryCall", "EmptyCall"], timeoutMs: 1000 },
    });
    const stats = await load.stats(12, 5000);
    await load.stop();
    expect(stats.rpcsByPeer).toEqual({ a: 12 });
    expect(maxInFlight).toBe(4);
    // About 300 ms at 2,000 RPCs a second: without the limit, hundreds would have been sent.
    expect(client.sent).toBeLessThan(30);
  });

  test("configure() changes the RPC types and metadata of the RPCs sent from then on", async () => {
    const seen: string[] = [];
    const client: InteropClient = {
      async call(method, options) {
        seen.push(`${method}${options.metadata.map(([key, value]) => ` ${key}=${value}`).join("")}`);
        return { ok: true, code: 0, peer: "a" };
      },
      async close() {},
    };
    const load = startLoadClient({ client, qps: 500, config: { types: ["UnaryCall"], timeoutMs: 1000 } });
    await load.stats(2, 5000);
    load.configure({ types: ["EmptyCall"], metadata: { EmptyCall: [["xds_md", "empty_ytpme"]] }, timeoutMs: 1000 });
    const after = seen.length;
    const stats = await load.stats(3, 5000);
    await load.stop();
    expect(seen.slice(0, 2)).toEqual(["UnaryCall", "UnaryCall"]);
    expect(seen.slice(after)).toEqual(Array(seen.length - after).fill("EmptyCall xds_md=empty_ytpme"));
    expect(stats.rpcsByMethod).toEqual({ EmptyCall: { a: 3 } });
  });

  test("a block that does not complete in time comes back partial", async () => {
    const client = fakeClient(
      () => ({ ok: true, code: 0, peer: "a" }),
      () => 400,
    );
    const load = startLoadClient({ client, qps: 500, config: { types: ["UnaryCall"], timeoutMs: 1000 } });
    const stats = await load.stats(5, 50);
    expect(stats).toEqual({ rpcsByPeer: {}, rpcsByMethod: {}, numFailures: 0, failureCodes: {}, complete: false });
    await load.stop();
  });
});
