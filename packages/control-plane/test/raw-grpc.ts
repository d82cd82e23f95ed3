// A gRPC client at the byte level over node:http2, for what a well-behaved client never sends: frames with lying
// headers, garbage, clients that stop reading or vanish mid-frame.
import * as http2 from "node:http2";

export const SOTW_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
export const DELTA_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

/** A gRPC length-prefixed message: flag byte, 4-byte big-endian length, then the bytes. */
export function grpcFrame(message: Uint8Array, options: { compressed?: boolean; claimedLength?: number } = {}): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = options.compressed ? 1 : 0;
  frame.writeUInt32BE(options.claimedLength ?? message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** How a raw stream ended, as the client saw it. */
export interface RawOutcome {
  /** `grpc-status` from the trailers (or a trailers-only response); undefined if none arrived. */
  readonly status: number | undefined;
  readonly message: string | undefined;
  /** Bytes of response messages received (frame payloads, in order). */
  readonly messages: readonly Buffer[];
  /** The RST_STREAM code the stream closed with (0 = NO_ERROR), as node:http2 reports it. */
  readonly rstCode: number;
  readonly httpStatus: number | undefined;
}

export interface RawStream {
  readonly stream: http2.ClientHttp2Stream;
  /** Resolves when the HTTP/2 stream is closed (both sides, or reset). */
  readonly closed: Promise<RawOutcome>;
  /** Messages received so far. */
  readonly messages: Buffer[];
  /** Starts reading (a stream opened with `read: false`). */
  read(): void;
}

export const LRS_PATH = "/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats";

export function rawSession(url: string, options: http2.ClientSessionOptions = {}): http2.ClientHttp2Session {
  const session = http2.connect(url, options);
  session.on("error", () => {});
  return session;
}

/**
 * Opens a stream on `path`; `read: false` leaves it paused (the client never reads, so HTTP/2 flow control stalls the
 * server's writes once the window is full).
 */
export function rawStream(
  session: http2.ClientHttp2Session,
  path: string = SOTW_PATH,
  options: { read?: boolean; headers?: http2.OutgoingHttpHeaders } = {},
): RawStream {
  const stream = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
    ...options.headers,
  });
  const messages: Buffer[] = [];
  let status: number | undefined;
  let message: string | undefined;
  let httpStatus: number | undefined;
  let pending = Buffer.alloc(0);
  const takeStatus = (headers: http2.IncomingHttpHeaders): void => {
    if (headers["grpc-status"] !== undefined) {
      status = Number(headers["grpc-status"]);
      const raw = headers["grpc-message"];
      message = typeof raw === "string" ? decodeURIComponent(raw) : undefined;
    }
  };
  stream.on("response", (headers) => {
    httpStatus = Number(headers[":status"]);
    takeStatus(headers);
  });
  stream.on("trailers", takeStatus);
  stream.on("error", () => {});
  let reading = false;
  const read = (): void => {
    if (reading) return;
    reading = true;
    stream.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 5 + length) break;
        messages.push(pending.subarray(5, 5 + length));
        pending = pending.subarray(5 + length);
      }
    });
  };
  if (options.read !== false) read();
  const closed = new Promise<RawOutcome>((resolve) => {
    stream.on("close", () => resolve({ status, message, messages, rstCode: stream.rstCode ?? 0, httpStatus }));
  });
  return { stream, closed, messages, read };
}

/** Waits until `messages` holds at least `count` messages (polling: the raw client has no event per message). */
export async function waitForMessages(raw: RawStream, count: number, timeoutMs = 3000): Promise<Buffer[]> {
  const deadline = Date.now() + timeoutMs;
  while (raw.messages.length < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} messages, got ${raw.messages.length}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return raw.messages;
}
