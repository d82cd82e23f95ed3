// The envelope readers against connect's own decoder (transformSplitEnvelope, the slow path), on random message
// streams cut into random chunks, some truncated, some with a prefix past the limit: the lean call's splitter yields
// what connect yields and fails where it fails; the gate in front of connect's decoder changes nothing connect
// yields. Then the hostile case: a prefix claiming 4 GiB under a 4 GiB limit holds only what arrived.
import { Code, ConnectError } from "@connectrpc/connect";
import { transformSplitEnvelope } from "@connectrpc/connect/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EnvelopeGate, EnvelopeSplitter } from "./envelopes.js";

type Outcome = { envelopes: string[]; error?: string };

const show = (flags: number, data: Uint8Array) => `${flags}:${Buffer.from(data).toString("hex")}`;
const errorOf = (error: unknown) => {
  const e = ConnectError.from(error);
  return `${e.code} ${e.rawMessage}`;
};

async function* iterate(chunks: readonly Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

/** connect's decoder over `source`. */
async function connectOutcome(source: AsyncIterable<Uint8Array>, readMaxBytes: number): Promise<Outcome> {
  const envelopes: string[] = [];
  try {
    for await (const env of transformSplitEnvelope(readMaxBytes)(source)) envelopes.push(show(env.flags, env.data));
    return { envelopes };
  } catch (error) {
    return { envelopes, error: errorOf(error) };
  }
}

function splitterOutcome(chunks: readonly Uint8Array[], readMaxBytes: number): Outcome {
  const splitter = new EnvelopeSplitter(readMaxBytes, () => {});
  const envelopes: string[] = [];
  try {
    for (const chunk of chunks) for (const env of splitter.split(chunk)) envelopes.push(show(env.flags, env.data));
  } catch (error) {
    return { envelopes, error: errorOf(error) };
  }
  return splitter.partial
    ? { envelopes, error: `${Code.InvalidArgument} protocol error: incomplete envelope` }
    : { envelopes };
}

async function* gated(chunks: readonly Uint8Array[], gate: EnvelopeGate): AsyncIterable<Uint8Array> {
  for (const chunk of chunks) yield* gate.push(chunk);
  yield* gate.end();
}

const envelope = (flags: number, data: Uint8Array) => {
  const out = new Uint8Array(5 + data.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, data.length);
  out.set(data, 5);
  return out;
};

/** A body: messages, maybe a prefix claiming `claim` bytes, maybe cut short; cut into chunks; and a limit. */
const body = fc
  .record({
    messages: fc.array(fc.record({ flags: fc.constantFrom(0, 1), data: fc.uint8Array({ maxLength: 30 }) }), {
      maxLength: 6,
    }),
    claim: fc.option(fc.integer({ min: 0, max: 0xffff_ffff }), { nil: undefined }),
    cut: fc.option(fc.nat(), { nil: undefined }),
    cuts: fc.array(fc.nat(), { maxLength: 8 }),
    readMaxBytes: fc.integer({ min: 0, max: 40 }),
  })
  .map(({ messages, claim, cut, cuts, readMaxBytes }) => {
    const parts = messages.map((m) => envelope(m.flags, m.data));
    if (claim !== undefined) parts.push(envelope(0, new Uint8Array(0)).fill(0xff, 1, 5).fill(0, 0, 1));
    if (claim !== undefined) new DataView(parts.at(-1)!.buffer).setUint32(1, claim);
    let bytes = Buffer.concat(parts);
    if (cut !== undefined && bytes.length > 0) bytes = bytes.subarray(0, cut % bytes.length);
    const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
    const chunks: Uint8Array[] = [];
    let from = 0;
    for (const point of [...points, bytes.length]) {
      if (point > from) chunks.push(bytes.subarray(from, point));
      from = Math.max(from, point);
    }
    return { chunks, readMaxBytes };
  });

describe("envelope readers", () => {
  it("the splitter yields and fails as connect's decoder does, whatever the chunking", async () => {
    await fc.assert(
      fc.asyncProperty(body, async ({ chunks, readMaxBytes }) => {
        expect(splitterOutcome(chunks, readMaxBytes)).toEqual(await connectOutcome(iterate(chunks), readMaxBytes));
      }),
      { numRuns: 500 },
    );
  });

  it("the gate changes nothing connect's decoder yields or fails with, and passes on only whole messages", async () => {
    await fc.assert(
      fc.asyncProperty(body, async ({ chunks, readMaxBytes }) => {
        const gate = new EnvelopeGate(readMaxBytes);
        expect(await connectOutcome(gated(chunks, gate), readMaxBytes)).toEqual(
          await connectOutcome(iterate(chunks), readMaxBytes),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("counts every declared length once, in both readers", () => {
    const lengths: number[] = [];
    const gateLengths: number[] = [];
    const stream = Buffer.concat([envelope(0, Uint8Array.of(1, 2, 3)), envelope(1, new Uint8Array(0))]);
    const splitter = new EnvelopeSplitter(10, (length) => lengths.push(length));
    const gate = new EnvelopeGate(10, (length) => gateLengths.push(length));
    for (const byte of stream) {
      splitter.split(Uint8Array.of(byte));
      gate.push(Uint8Array.of(byte));
    }
    expect(lengths).toEqual([3, 0]);
    expect(gateLengths).toEqual([3, 0]);
  });

  it("holds only what arrived of a message whose prefix claims 4 GiB", () => {
    const prefix = Uint8Array.of(0, 0xff, 0xff, 0xff, 0xf0);
    const kib = new Uint8Array(1024).fill(7);
    const splitter = new EnvelopeSplitter(0xffff_ffff, () => {});
    expect(splitter.split(prefix)).toEqual([]);
    expect(splitter.split(kib)).toEqual([]);
    expect(splitter.heldBytes).toBe(1024);
    expect(splitter.partial).toBe(true);
    const gate = new EnvelopeGate(0xffff_ffff);
    expect(gate.push(prefix)).toEqual([]);
    expect(gate.push(kib)).toEqual([]);
    // The body ends: connect's error, without connect ever reading the prefix.
    expect(() => gate.end()).toThrow(/incomplete envelope/);
  });

  it("fails a prefix over the limit at once, RESOURCE_EXHAUSTED, in both readers", () => {
    const prefix = Uint8Array.of(0, 0xff, 0xff, 0xff, 0xf0);
    const expected = "message size 4294967280 is larger than configured readMaxBytes 4194304";
    const splitter = new EnvelopeSplitter(4 * 1024 * 1024, () => {});
    expect(() => splitter.split(prefix)).toThrow(expected);
    expect(() => new EnvelopeGate(4 * 1024 * 1024).push(prefix)).toThrow(expected);
  });
});
