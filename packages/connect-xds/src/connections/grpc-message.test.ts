// The lenient grpc-message decoding against decodeURIComponent (the strict decoder connect uses): equal wherever
// that one succeeds; never throwing; and the rewrite on arrival makes connect's decoding yield the lenient text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeGrpcMessage, decodePiecewise, normalizeGrpcMessage } from "./grpc-message.js";

/** Strings rich in `%`, hex digits and escapes, valid or not, plus encodings of any text. */
const message = fc.oneof(
  fc
    .array(
      fc.oneof(
        fc.constantFrom("%", "%2", "%zz", "%E0", "%A4", "%80", "%C3%A9", "%F0%9F%98%80", "%ED%A0%80", "%EF%BB%BF"),
        fc.stringMatching(/^[0-9a-fA-F% a-z]{0,4}$/),
        fc.string({ unit: "binary", maxLength: 3 }),
      ),
      { maxLength: 10 },
    )
    .map((parts) => parts.join("")),
  fc.string({ unit: "grapheme", maxLength: 20 }).map(encodeURIComponent),
);

function strict(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

describe("grpc-message", () => {
  it("decodes as decodeURIComponent where that succeeds (the fast path), and never throws where it does not", () => {
    let valid = 0;
    fc.assert(
      fc.property(message, (value) => {
        const lenient = decodePiecewise(value);
        expect(decodeGrpcMessage(value)).toBe(lenient);
        const expected = strict(value);
        if (expected !== undefined) {
          valid++;
          expect(lenient).toBe(expected);
        }
      }),
      { numRuns: 2_000 },
    );
    // Both kinds were drawn.
    expect(valid).toBeGreaterThan(200);
    expect(valid).toBeLessThan(1_800);
  });

  it("keeps invalid escapes as they are and reads broken UTF-8 as U+FFFD", () => {
    expect(decodeGrpcMessage("bad %E0%A4%A and %ZZ %")).toBe("bad \uFFFD%A and %ZZ %");
    expect(decodeGrpcMessage("100%")).toBe("100%");
    expect(decodeGrpcMessage("%C3%A9%zz%20")).toBe("é%zz ");
    expect(decodeGrpcMessage("%ED%A0%80")).toBe("\uFFFD\uFFFD\uFFFD");
  });

  it("rewrites a value connect cannot decode so that decodeURIComponent yields the lenient text", () => {
    fc.assert(
      fc.property(message, (value) => {
        const raw = { "grpc-message": value };
        normalizeGrpcMessage(raw);
        expect(decodeURIComponent(raw["grpc-message"])).toBe(decodeGrpcMessage(value));
        // A value that was valid is left as it was.
        if (strict(value) !== undefined) expect(raw["grpc-message"]).toBe(value);
      }),
      { numRuns: 2_000 },
    );
  });
});
