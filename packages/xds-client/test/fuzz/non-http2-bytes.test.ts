// Random bytes from the server side of the TCP socket, where the client expects an HTTP/2 server: whatever arrives
// (written at once or after the client's preface, in one chunk or several, then the socket ended, destroyed or left
// open), the client's watchers get UNAVAILABLE, the client keeps retrying, and nothing reaches
// `process.on("uncaughtException")`.
//
// Steps, per case: (1) a TCP server on 127.0.0.1 that answers each connection with the case's bytes; (2) a client
// (state of the world or delta, connect deadline 300 ms, retries every ~20 ms) watching cluster "c"; (3) wait for
// the watcher's first event and a second connection; (4) expect UNAVAILABLE, close everything, and expect no
// uncaught exception. A few seeded cases run in `npm test`; XDSKIT_FUZZ_RUNS runs more (see settings.ts).
import * as net from "node:net";
import fc from "fast-check";
import { expect, it } from "vitest";
import { clusterResourceType } from "../../src/index.js";
import { createXdsClientWithInternals } from "../../src/internal.js";
import { recordingWatcher } from "../support/recorder.js";
import { countUncaught, until } from "../support/uncaught.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

interface Case {
  readonly apiType: "GRPC" | "DELTA_GRPC";
  /** Written in order, each a separate write. */
  readonly chunks: Uint8Array[];
  /** Written when the connection opens, or after the client's first bytes. */
  readonly when: "at-once" | "after-preface";
  readonly after: "end" | "destroy" | "stay-open";
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  apiType: fc.constantFrom("GRPC" as const, "DELTA_GRPC" as const),
  chunks: fc.array(fc.uint8Array({ minLength: 1, maxLength: 64 }), { minLength: 1, maxLength: 4 }),
  when: fc.constantFrom("at-once" as const, "after-preface" as const),
  after: fc.constantFrom("end" as const, "destroy" as const, "stay-open" as const),
});

const uncaught = countUncaught();

async function runCase(c: Case): Promise<void> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    const answer = () => {
      for (const chunk of c.chunks) socket.write(chunk);
      if (c.after === "end") socket.end();
      else if (c.after === "destroy") socket.destroy();
    };
    if (c.when === "at-once") answer();
    else socket.once("data", answer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = createXdsClientWithInternals(
    {
      bootstrap: {
        xds_servers: [
          {
            server_uri: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
            channel_creds: [{ type: "insecure" }],
            api_type: c.apiType,
          },
        ],
        node: { id: "n" },
      },
      env: {},
      connectTimeoutMs: 300,
    },
    { backoff: { initialMs: 20, maxMs: 20 } },
  );
  try {
    const w = recordingWatcher<unknown>();
    client.watch(clusterResourceType, "c", w);
    await until(() => w.events.length > 0 && connections >= 2);
    const [first] = w.events;
    expect(first?.kind === "error" ? first.error.code : first?.kind).toBe(14);
  } finally {
    await client.close();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await new Promise((resolve) => setImmediate(resolve));
}

it(
  "random bytes from a server that is not HTTP/2 are a connectivity error, never an uncaught exception",
  async () => {
    const before = uncaught.count();
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await runCase(c);
        expect(uncaught.count() - before).toBe(0);
      }),
      fuzzParameters(6, 2_000),
    );
    expect(uncaught.errors).toEqual([]);
  },
  fuzzTimeoutMs,
);
