// packages/control-plane/README.md's Capacity figures are generated from BENCHMARKS.md's tables: the committed
// README must be what the generator makes of the committed BENCHMARKS.md, and a moved figure must move the README.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BENCHMARKS, fanoutBlock, README, relayBlock, renderReadme } from "../capacity-figures.mjs";

const benchmarks = readFileSync(BENCHMARKS, "utf8");
const readme = readFileSync(README, "utf8");

describe("the control plane's Capacity figures", () => {
  it("are the ones BENCHMARKS.md gives (run `node tools/scripts/capacity-figures.mjs --write` after a new run)", () => {
    expect(renderReadme(readme, benchmarks)).toBe(readme);
  });

  it("follow BENCHMARKS.md: the relay tier's control plane RSS, a stream's heap, the change time, the run", () => {
    const relay = relayBlock(benchmarks);
    expect(relay).toMatch(/\| this server's RSS \| \d+ MB \| [\d,]+ MB \|/);
    const moved = benchmarks
      .replace(/\| control plane RSS +\| +[\d.]+ MB \| +[\d.]+ MB \|/, "| control plane RSS | 126.0 MB | 968.0 MB |")
      .replace(/(\| relay 1 \|[^\n]*\| +)[\d.]+ KB \|\n/, "$1 41.00 KB |\n")
      .replace(/(\| cluster-0 changes: every stream has it \(slowest\) \| +)[\d,]+ ms/, "$16,300 ms")
      .replace(/- Date: \d{4}-\d\d-\d\d/, "- Date: 2030-01-02");
    const next = relayBlock(moved);
    expect(next).toContain("| this server's RSS | 126 MB | 968 MB |");
    expect(next).toMatch(/\| one change reaches every stream \(slowest\) \| 6,300 ms \|/);
    expect(next).toContain("full run of 2030-01-02");
    expect(next).not.toBe(relay);
    expect(fanoutBlock(moved)).toContain("full run of 2030-01-02");
  });

  it("fail loudly when BENCHMARKS.md loses a table the README needs", () => {
    expect(() => relayBlock(benchmarks.replace("### `relay-tier`", "### `relay-tier-old`"))).toThrow(
      /no ### `relay-tier` section/,
    );
  });
});
