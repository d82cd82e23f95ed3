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
