import { describe, expect, it } from "vitest";
import { isLoopbackHost } from "./tls-credentials.js";

describe("isLoopbackHost", () => {
  it("takes localhost, 127.0.0.0/8 and ::1 as loopback, and nothing else", () => {
    const loopback = ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"];
    const other = [
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "192.168.1.1",
      "example.com",
      "localhost.example.com",
      "::2",
      "128.0.0.1",
    ];
    expect(loopback.filter(isLoopbackHost)).toEqual(loopback);
    expect(other.filter(isLoopbackHost)).toEqual([]);
  });
});
