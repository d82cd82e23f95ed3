import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runComposedClient } from "../src/composed-client.js";

describe("examples/composed-client", () => {
  it("follows LDS, RDS, CDS and EDS to the endpoints of the variant DPDS chose, and CSDS lists the chain ACKED", async () => {
    const lines: string[] = [];
    const result = await runComposedClient((line) => lines.push(line));
    // The canary variant's endpoints (the stable variant's are 127.0.0.1:50051).
    expect(result.endpoints).toEqual(["127.0.0.1:50052"]);
    expect(lines.slice(0, 3)).toEqual([
      "listener echo.test -> route echo-route",
      "route echo-route -> cluster echo",
      "cluster echo -> endpoints echo-canary",
    ]);
    const acked = result.csds
      .split("\n")
      .filter((line) => / ACKED /.test(line))
      .map((line) => line.split(/\s+/).slice(0, 2).join(" "));
    expect(acked.sort()).toEqual([
      "Cluster echo{track=canary}",
      "ClusterLoadAssignment echo-canary",
      "DynamicParameterConstraintsMap dynamic-parameters",
      "Listener echo.test",
      "RouteConfiguration echo-route",
    ]);
    expect(result.csds.split("\n")[0]).toBe("client xds:///echo.test, node example-node");
  });
});

describe("examples/composed-client/README.md", () => {
  const here = fileURLToPath(new URL("..", import.meta.url));
  const readme = readFileSync(join(here, "README.md"), "utf8");
  const scripts = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).scripts;

  it("gives commands that work from a fresh clone (no pnpm on PATH): the package's setup and start scripts", () => {
    const commands = (/```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "")
      .split("\n")
      .map((line) => line.replace(/#.*$/, "").trim())
      .filter((line) => line !== "");
    expect(commands).toEqual(["cd examples/composed-client", "npm run setup", "npm start"]);
    expect(scripts.setup).toBe("node ../../tools/scripts/run.mjs setup @xdskit/example-composed-client");
    expect(scripts.start).toBe("node dist/main.js");
  });

  it("shows what `npm start` prints (the versions aside)", () => {
    const shown = /```text\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const run = spawnSync(process.execPath, [join(here, "dist", "main.js")], { encoding: "utf8", timeout: 30_000 });
    expect(run.status).toBe(0);
    const normalize = (text: string) =>
      text
        .replace(/ACKED +\d+/g, "ACKED N")
        .replace(/ +$/gm, "")
        .trim();
    expect(normalize(run.stdout)).toBe(normalize(shown));
  });
});
