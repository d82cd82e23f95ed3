import { describe, expect, it } from "vitest";
import { PACKAGE_NAME } from "../src/index.js";

describe("package", () => {
  it("names itself", () => {
    expect(PACKAGE_NAME).toBe("@xdskit/connect-xds");
  });
});
