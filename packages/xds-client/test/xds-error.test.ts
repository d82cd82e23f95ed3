import { describe, expect, it } from "vitest";
import { StatusCode, statusCodeName, XdsError } from "../src/index.js";

describe("XdsError", () => {
  it("prefixes the code name and appends the node ID", () => {
    const error = new XdsError(StatusCode.NOT_FOUND, "does_not_exist", "resource A does not exist", { nodeId: "n1" });
    expect(error.message).toBe("[NOT_FOUND] resource A does not exist (node ID: n1)");
    expect([error.code, error.kind, error.detail, error.name]).toEqual([
      5,
      "does_not_exist",
      "resource A does not exist",
      "XdsError",
    ]);
  });

  it("keeps code, kind and detail when given another resource", () => {
    const error = new XdsError(StatusCode.UNAVAILABLE, "connection", "down", { nodeId: "n1" });
    const forB = error.withContext({ resource: { typeUrl: "t", name: "B" } });
    expect(forB.message).toBe(error.message);
    expect(forB.resource).toEqual({ typeUrl: "t", name: "B" });
    expect(forB.kind).toBe("connection");
  });

  it("normalises anything thrown", () => {
    const own = new XdsError(StatusCode.INTERNAL, "internal", "x");
    expect(XdsError.from(own)).toBe(own);
    const wrapped = XdsError.from(new TypeError("boom"));
    expect(wrapped.message).toBe("[UNKNOWN] boom");
    expect(wrapped.cause).toBeInstanceOf(TypeError);
    expect(XdsError.from("text").detail).toBe("text");
    expect(statusCodeName(99)).toBe("CODE_99");
  });
});
