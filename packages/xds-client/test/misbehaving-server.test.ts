// A misbehaving server never crashes the process: garbage on the wire, a non-gRPC answer, or a stream reset become
// connectivity errors for the watchers, and the client keeps retrying.
import * as http2 from "node:http2";
import { afterEach, describe, expect, it } from "vitest";
import { closeRawServer, firstEventsOf, framed, serveRaw as serve } from "./support/raw-http2-server.js";
import { summarize } from "./support/recorder.js";
import { testListenerType } from "./support/test-types.js";

afterEach(closeRawServer);

async function firstEvents(port: number, count = 1): Promise<string[]> {
  return summarize(await firstEventsOf(port, count));
}

describe("a misbehaving server", () => {
  it("sending bytes that are not a DiscoveryResponse is a connectivity error", async () => {
    const port = await serve((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      // A gRPC frame (uncompressed, length 4) holding an invalid protobuf: a field with wire type 7.
      stream.write(Buffer.from([0, 0, 0, 0, 4, 0x0f, 0xff, 0xff, 0xff]));
    });
    expect(await firstEvents(port)).toEqual(["error:UNAVAILABLE:connection"]);
  });

  it("a DiscoveryResponse holding a resource that is not an Any is a connectivity error, as if the frame were garbage", async () => {
    const typeUrl = Buffer.from(testListenerType.typeUrl);
    // type_url (field 4), then one resource (field 2) whose bytes are a field with wire type 7: the envelope reads,
    // the Any in it does not.
    const message = Buffer.concat([Buffer.from([0x22, typeUrl.length]), typeUrl, Buffer.from([0x12, 1, 0x0f])]);
    const port = await serve((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.write(framed(message));
    });
    const events = await firstEventsOf(port);
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    const error = events[0]?.kind === "error" ? events[0].error : undefined;
    expect(error?.message).toContain("INTERNAL: parse binary: illegal tag: field no 1 wire type 7");
  });

  it("answering with HTTP 500 and no gRPC is a connectivity error", async () => {
    const port = await serve((stream) => {
      stream.respond({ ":status": 500, "content-type": "text/html" });
      stream.end("<h1>oops</h1>");
    });
    expect(await firstEvents(port)).toEqual(["error:UNAVAILABLE:connection"]);
  });

  it("resetting every stream is a connectivity error, and the client keeps retrying", async () => {
    let attempts = 0;
    const port = await serve((stream) => {
      attempts += 1;
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    expect(await firstEvents(port)).toEqual(["error:UNAVAILABLE:connection"]);
    for (let i = 0; i < 300 && attempts < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(attempts).toBeGreaterThanOrEqual(2);
  });
});
