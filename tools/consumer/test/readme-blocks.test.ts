import { describe, expect, it } from "vitest";
import { readmeBlocks } from "../src/readme-blocks.js";

describe("readmeBlocks", () => {
  it("takes the ts blocks marked consumer or consumer-run, in order, and nothing else", () => {
    const markdown = [
      "# pkg",
      "```ts consumer",
      'import { a } from "pkg";',
      "```",
      "```ts",
      "not compiled();",
      "```",
      "````ts consumer-run",
      "```",
      "inner fence kept",
      "```",
      "````",
      "```sh consumer",
      "echo shell is not ts",
      "```",
    ].join("\n");
    expect(readmeBlocks(markdown, "pkg")).toEqual([
      { id: "pkg-1", run: false, line: 2, code: 'import { a } from "pkg";' },
      { id: "pkg-2", run: true, line: 8, code: "```\ninner fence kept\n```" },
    ]);
  });

  it("reads an unclosed block to the end of the file", () => {
    expect(readmeBlocks("```ts consumer\nx();\n", "p")).toEqual([{ id: "p-1", run: false, line: 1, code: "x();\n" }]);
  });
});
