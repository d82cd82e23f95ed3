// A connection's out-of-band ORCA stream follows the connection and its listeners: it runs only while the connection
// is READY and someone listens, and a connection back to READY starts a new one. Over HTTP/2, the stream's reports
// reaching WRR are tested in test/advanced-policies.test.ts.
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../test/support/fake-helper.js";
import { ConnectionOrca } from "./connection-orca.js";

/** A transport whose streaming calls last until cancelled; counts the calls started and the ones running. */
function hangingTransport() {
  const calls = { started: 0, running: 0 };
  const transport = {
    stream: async (_method: unknown, signal: AbortSignal | undefined) => {
      calls.started++;
      calls.running++;
      const ended = new Promise<never>((_, reject) =>
        signal?.addEventListener("abort", () => {
          calls.running--;
          reject(new ConnectError("cancelled", Code.Canceled));
        }),
      );
      return {
        stream: true,
        message: { [Symbol.asyncIterator]: () => ({ next: () => ended }) },
        header: new Headers(),
        trailer: new Headers(),
      };
    },
  } as unknown as Transport;
  return { transport, calls };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("ConnectionOrca", () => {
  it("streams while the connection is READY and someone listens, and again after a reconnection", async () => {
    const { transport, calls } = hangingTransport();
    const orca = new ConnectionOrca(transport, new VirtualClock(), undefined);
    const listener = { intervalMs: 1000, onReport() {} };
    const stop = orca.add(listener);
    await settle();
    expect(calls).toEqual({ started: 0, running: 0 });
    orca.onState("READY");
    await settle();
    expect(calls).toEqual({ started: 1, running: 1 });
    orca.onState("IDLE");
    await settle();
    expect(calls).toEqual({ started: 1, running: 0 });
    orca.onState("READY");
    await settle();
    expect(calls).toEqual({ started: 2, running: 1 });
    stop();
    await settle();
    expect(calls).toEqual({ started: 2, running: 0 });
    orca.close();
  });
});
