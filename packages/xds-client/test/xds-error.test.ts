import { describe, expect, it } from "vitest";
import { BootstrapError, isXdsError, StatusCode, statusCodeName, XdsError } from "../src/index.js";
import { errorMessage } from "../src/internal.js";

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

  it("reads the message of anything thrown", () => {
    expect(errorMessage(new TypeError("bad type"))).toBe("bad type");
    expect(errorMessage({ message: "from an object" })).toBe("from an object");
    expect(errorMessage("text")).toBe("text");
    expect(errorMessage(42)).toBe("42");
    expect(errorMessage(undefined)).toBe("undefined");
  });
});

describe("isXdsError", () => {
  it("recognises an XdsError and its subclasses, and nothing else", () => {
    expect(isXdsError(new XdsError(StatusCode.INTERNAL, "internal", "x"))).toBe(true);
    expect(isXdsError(new BootstrapError(["$.node: missing"]))).toBe(true);
    expect(isXdsError(new Error("x"))).toBe(false);
    expect(isXdsError({ code: 14, kind: "connection", message: "[UNAVAILABLE] x" })).toBe(false);
    expect(isXdsError(undefined)).toBe(false);
    expect(isXdsError("XdsError")).toBe(false);
  });

  it("recognises an XdsError made by another copy of the package, where instanceof fails", () => {
    // Another copy defines its own class; what they share is the brand registered under Symbol.for.
    class OtherCopyXdsError extends Error {}
    Object.defineProperty(OtherCopyXdsError.prototype, Symbol.for("xdskit.XdsError"), { value: true });
    const foreign = new OtherCopyXdsError("[UNAVAILABLE] down");
    expect(foreign instanceof XdsError).toBe(false);
    expect(isXdsError(foreign)).toBe(true);
    expect(XdsError.from(foreign)).toBe(foreign);
  });
});
