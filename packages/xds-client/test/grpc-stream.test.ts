// The default transport reads gRPC's message framing itself (src/transport/grpc-stream.ts). The splitter gives the
// messages of a body however its bytes are cut into chunks, and refuses a message too large or oddly flagged from its
// 5-byte prefix alone; over real HTTP/2, the client reads compressed messages and messages cut into tiny DATA frames,
// and a trailers-only error, a bad flag, a cut message or one inflating past the limit fail the stream with what went
// wrong.
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { MessageSplitter } from "../src/transport/grpc-stream.js";
import { closeRawServer, firstEventsOf, framed, serveRaw } from "./support/raw-http2-server.js";
import { summarize } from "./support/recorder.js";
import { listenerAny, testListenerType } from "./support/test-types.js";

afterEach(closeRawServer);

function thrown(run: () => unknown): ConnectError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  }
  throw new Error("did not throw");
}

describe("MessageSplitter", () => {
  it("gives the messages of a body, whatever its chunks", () => {
    const messagesArb = fc.array(fc.record({ flags: fc.constantFrom(0, 1), data: fc.uint8Array({ maxLength: 40 }) }), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(messagesArb, fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1 }), (messages, cuts) => {
        const body = Buffer.concat(messages.map(({ flags, data }) => framed(data, flags)));
        const splitter = new MessageSplitter(1000);
        const out: { flags: number; data: Uint8Array }[] = [];
        let pos = 0;
        for (let i = 0; pos < body.length; i++) {
          const end = Math.min(body.length, pos + cuts[i % cuts.length]!);
          splitter.push(body.subarray(pos, end));
          pos = end;
          for (let m = splitter.next(); m !== undefined; m = splitter.next()) out.push({ ...m });
        }
        expect(splitter.partial).toBe(false);
        expect(out.map((m) => ({ flags: m.flags, data: Array.from(m.data) }))).toEqual(
          messages.map((m) => ({ flags: m.flags, data: Array.from(m.data) })),
        );
        // Each message is in memory of its own, exactly its size.
        for (const m of out) expect(m.data.buffer.byteLength).toBe(m.data.length);
      }),
      { seed: 37, numRuns: 300 },
    );
  });

  it("knows a body that ended within a message", () => {
    const splitter = new MessageSplitter(1000);
    splitter.push(framed(new Uint8Array([1, 2, 3])).subarray(0, 6));
    expect(splitter.next()).toBeUndefined();
    expect(splitter.partial).toBe(true);
    const prefixOnly = new MessageSplitter(1000);
    prefixOnly.push(new Uint8Array([0, 0]));
    expect(prefixOnly.partial).toBe(true);
  });

  it("refuses a message over the limit from its prefix, before its bytes arrive", () => {
    const splitter = new MessageSplitter(100);
    splitter.push(new Uint8Array([0, 0, 0, 0, 101]));
    const error = thrown(() => splitter.next());
    expect(error.code).toBe(Code.ResourceExhausted);
    expect(error.rawMessage).toBe("message size 101 is larger than configured readMaxBytes 100");
    const atLimit = new MessageSplitter(100);
    atLimit.push(new Uint8Array([0, 0, 0, 0, 100]));
    expect(atLimit.next()).toBeUndefined();
    // The largest length a prefix can hold.
    const huge = new MessageSplitter(1 << 30);
    huge.push(new Uint8Array([0, 0xff, 0xff, 0xff, 0xff]));
    expect(thrown(() => huge.next()).rawMessage).toContain("4294967295");
  });

  it("reserves nothing for a message below the limit until its bytes arrive", () => {
    const splitter = new MessageSplitter(1 << 30);
    const before = process.memoryUsage().arrayBuffers;
    // A prefix claiming 512 MiB, and one byte of it.
    splitter.push(new Uint8Array([0, 0x20, 0, 0, 0, 7]));
    expect(splitter.next()).toBeUndefined();
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1 << 20);
    expect(splitter.partial).toBe(true);
  });

  it("refuses flags other than compressed or not", () => {
    for (const flags of [2, 0x80, 0xff]) {
      const splitter = new MessageSplitter(100);
      splitter.push(new Uint8Array([flags, 0, 0, 0, 0]));
      const error = thrown(() => splitter.next());
      expect(error.code).toBe(Code.Internal);
      expect(error.rawMessage).toBe(`protocol error: message flags ${flags}`);
    }
  });
});

describe("gRPC framing over HTTP/2", () => {
  const response = toBinary(
    DiscoveryResponseSchema,
    create(DiscoveryResponseSchema, {
      versionInfo: "1",
      typeUrl: testListenerType.typeUrl,
      nonce: "n1",
      resources: [listenerAny("L", "stats")],
    }),
  );

  it("reads a gzip-compressed response, cut into 3-byte DATA frames", async () => {
    let encoding: string | undefined;
    const port = await serveRaw((stream, headers) => {
      encoding = headers["grpc-accept-encoding"] as string | undefined;
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-encoding": "gzip" });
      const bytes = framed(gzipSync(response), 1);
      for (let i = 0; i < bytes.length; i += 3) stream.write(bytes.subarray(i, i + 3));
    });
    const events = await firstEventsOf(port);
    expect(summarize(events)).toEqual(["resource:1:L"]);
    expect(encoding).toContain("gzip");
  });

  it("fails the stream when a compressed message inflates past maxReceiveMessageBytes", async () => {
    // 100 bytes on the wire, 1 MiB once inflated, against a limit of 64 KiB.
    const bomb = gzipSync(new Uint8Array(1 << 20));
    expect(bomb.length).toBeLessThan(2000);
    const port = await serveRaw((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-encoding": "gzip" });
      stream.write(framed(bomb, 1));
    });
    const events = await firstEventsOf(port, 1, 1 << 16);
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain("RESOURCE_EXHAUSTED");
  });

  it("fails the stream with the status of a trailers-only response", async () => {
    const port = await serveRaw((stream) => {
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": "7", "grpc-message": "not you" },
        { endStream: true },
      );
    });
    const events = await firstEventsOf(port);
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain("PERMISSION_DENIED: not you");
  });

  it("fails the stream on a message with unknown flags, or one cut short by the end of the stream", async () => {
    for (const [bytes, expected] of [
      [framed(response, 2), "INTERNAL: protocol error: message flags 2"],
      [framed(response).subarray(0, 20), "INVALID_ARGUMENT: protocol error: incomplete envelope"],
    ] as const) {
      const port = await serveRaw((stream) => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(bytes);
      });
      const events = await firstEventsOf(port);
      expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
      expect(events[0]?.kind === "error" && events[0].error.message).toContain(expected);
      await closeRawServer();
    }
  });
});
