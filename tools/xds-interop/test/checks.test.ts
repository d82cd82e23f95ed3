// The block checks the cases assert with: each accepts the blocks it should and names what is wrong otherwise.
import { describe, expect, test } from "vitest";
import { allGoTo, binomialInterval, evenlySpread, methodsGoTo, noneSucceed, weightedSplit } from "../src/checks.js";
import type { BlockStats } from "../src/load-client.js";

function block(rpcsByPeer: Record<string, number>, extra: Partial<BlockStats> = {}): BlockStats {
  return { rpcsByPeer, rpcsByMethod: {}, numFailures: 0, failureCodes: {}, complete: true, ...extra };
}

describe("binomialInterval", () => {
  // Expected bounds computed with exact rational arithmetic (Python fractions, math.comb) from the definition:
  // P(X < low) <= alpha/2 < P(X <= low), and the same from above.
  test.each([
    [10, 0.5, 0.05, [2, 8]],
    [100, 0.25, 1e-6, [6, 48]],
    [500, 0.2, 1e-6, [59, 146]],
    [1000, 0.2, 1e-6, [141, 264]],
  ] as const)("Binomial(%i, %f) at alpha %f", (n, p, alpha, expected) => {
    expect(binomialInterval(n, p, alpha)).toEqual(expected);
  });

  test("refuses what is not a distribution", () => {
    expect(() => binomialInterval(10, 0, 0.01)).toThrow(RangeError);
    expect(() => binomialInterval(10, 0.5, 1)).toThrow(RangeError);
    expect(() => binomialInterval(2.5, 0.5, 0.01)).toThrow(RangeError);
  });
});

describe("allGoTo", () => {
  const check = allGoTo(["a", "b"]);
  test("holds when exactly the given peers got RPCs", () => {
    expect(check(block({ a: 1, b: 19 }))).toBeUndefined();
  });
  test("names a peer that got none, a peer that should get none, and failures", () => {
    expect(check(block({ a: 20 }))).toBe("no RPC reached b");
    expect(check(block({ a: 10, b: 5, c: 5 }))).toBe("RPCs reached c, which should get none");
    expect(check(block({ a: 10, b: 9 }, { numFailures: 1 }))).toBe("1 RPCs failed");
    expect(allGoTo(["a", "b"], { allowFailures: true })(block({ a: 10, b: 9 }, { numFailures: 1 }))).toBeUndefined();
    expect(check(block({ a: 1, b: 1 }, { complete: false }))).toBe("the block did not complete in time");
  });
});

test("noneSucceed holds only for a block without a success", () => {
  expect(noneSucceed()(block({}, { numFailures: 20 }))).toBeUndefined();
  expect(noneSucceed()(block({ a: 1 }, { numFailures: 19 }))).toBe('RPCs succeeded: {"a":1}');
});

test("methodsGoTo checks each method's peers", () => {
  const check = methodsGoTo({ UnaryCall: ["alt"], EmptyCall: ["default"] });
  const byMethod = (unary: Record<string, number>, empty: Record<string, number>) =>
    block({}, { rpcsByMethod: { UnaryCall: unary, EmptyCall: empty } });
  expect(check(byMethod({ alt: 10 }, { default: 10 }))).toBeUndefined();
  expect(check(byMethod({ alt: 9, default: 1 }, { default: 10 }))).toBe(
    "UnaryCall: RPCs reached default, which should get none",
  );
  expect(check(byMethod({ alt: 10 }, {}))).toBe("EmptyCall: no RPC reached default");
});

test("evenlySpread allows one RPC either side of the even share", () => {
  const check = evenlySpread(["a", "b", "c", "d"]);
  expect(check(block({ a: 25, b: 25, c: 25, d: 25 }))).toBeUndefined();
  expect(check(block({ a: 26, b: 24, c: 25, d: 25 }))).toBeUndefined();
  expect(check(block({ a: 27, b: 23, c: 25, d: 25 }))).toBe("not an even split of 100 (25 each, ±1): a, b");
  expect(check(block({ a: 25, b: 25, c: 25, d: 24 }, { numFailures: 1 }))).toBe("1 RPCs failed");
});

test("weightedSplit bounds each peer's count by its Binomial interval", () => {
  const check = weightedSplit({ a: 20, b: 80 }, 1e-6);
  expect(check(block({ a: 100, b: 400 }))).toBeUndefined();
  expect(check(block({ a: 59, b: 441 }))).toBeUndefined();
  expect(check(block({ a: 58, b: 442 }))).toBe("a got 58 of 500, outside [59, 146]");
  expect(check(block({ a: 250, b: 250 }))).toBe("a got 250 of 500, outside [59, 146]");
  expect(check(block({ a: 100, b: 399, c: 1 }))).toBe("RPCs reached c, which should get none");
});
