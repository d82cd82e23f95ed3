// The LOGICAL_DNS resolver's timing on a virtual clock with a scripted lookup: re-resolution rate-limited, failures
// retried with backoff until a lookup succeeds. Real resolution of `localhost` runs in test/clusters.test.ts.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../test/support/fake-helper.js";
import { type DnsResult, startLogicalDns } from "./logical-dns.js";

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function start(answers: (readonly { address: string; family: number }[] | Error)[]) {
  const clock = new VirtualClock();
  const results: DnsResult[] = [];
  const lookups: number[] = [];
  const dns = startLogicalDns({
    hostname: "backend.example:8080",
    clock,
    // Backoff jitter 0: delays are exactly 1 s, 1.6 s, ...
    random: () => 0.5,
    minIntervalMs: 30_000,
    lookup: async (host) => {
      expect(host).toBe("backend.example");
      lookups.push(clock.now());
      const answer = answers.shift() ?? [];
      if (answer instanceof Error) throw answer;
      return answer;
    },
    onResult: (result) => results.push(result),
  });
  return { clock, results, lookups, dns };
}

describe("startLogicalDns", () => {
  it("resolves at once, writing IPv6 addresses in brackets, in the resolver's order", async () => {
    const { results, dns } = start([
      [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ],
    ]);
    await settle();
    expect(results).toEqual([{ ok: true, addresses: ["[::1]:8080", "127.0.0.1:8080"] }]);
    dns.close();
  });

  it("resolves again when asked, no sooner than 30 s after the last resolution, once for many requests", async () => {
    const one = [{ address: "10.0.0.1", family: 4 }];
    const { clock, lookups, dns } = start([one, one, one]);
    await settle();
    clock.advance(10_000);
    dns.requestReresolution();
    dns.requestReresolution();
    clock.advance(19_999);
    await settle();
    expect(lookups).toEqual([0]);
    clock.advance(1);
    await settle();
    expect(lookups).toEqual([0, 30_000]);
    // Long after the last one: at once (on the next timer turn).
    clock.advance(60_000);
    dns.requestReresolution();
    clock.advance(0);
    await settle();
    expect(lookups).toEqual([0, 30_000, 90_000]);
    dns.close();
  });

  it("retries a failed lookup with backoff (1 s, then 1.6 s) until one succeeds, reporting each failure", async () => {
    const { clock, results, lookups, dns } = start([new Error("ENOTFOUND"), [], [{ address: "10.0.0.2", family: 4 }]]);
    await settle();
    clock.advance(999);
    await settle();
    expect(lookups).toEqual([0]);
    clock.advance(1);
    await settle();
    clock.advance(1_600);
    await settle();
    expect(lookups).toEqual([0, 1_000, 2_600]);
    expect(results.map((r) => (r.ok ? r.addresses.join() : r.error))).toEqual([
      'DNS resolution of "backend.example" failed: ENOTFOUND',
      'DNS name "backend.example" has no addresses',
      "10.0.0.2:8080",
    ]);
    dns.close();
  });
});
