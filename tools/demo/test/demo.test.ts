// `npm run demo` must keep telling the whole story: run the built demo and check each step's outcome.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));

describe("the demo", () => {
  it("follows the chain, sees each change, prints the load the control plane received, moves between variants through DPDS, and the CSDS dump", () => {
    const run = spawnSync(process.execPath, [main], { encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(0);
    const text = run.stdout;
    expect(text).toMatch(/EDS demo-eds +v\S+ +2 localities, 3 endpoints/);
    expect(text).toMatch(/EDS demo-eds +v\S+ +2 localities, 4 endpoints/);
    // The story explains what could puzzle: the version numbers, the endpoints never called, the held-back error.
    expect(text).toContain("versions come from one counter for the whole server");
    expect(text).toMatch(
      /a local port nothing listens on: the transport sees it refuse connections and\n.*never picks it/,
    );
    expect(text).toContain('[client] 18 calls through createXdsTransport({ target: "xds:///demo.example" })');
    // The transport split the calls between the localities; the one report counts each call once, where it went.
    const zoneA = /demo-client +demo-cluster +eu-west\/a +(\d+) +\1 +0 +0 +cpu_utilization +0\.61\d +\1/.exec(text);
    const zoneB = /demo-client +demo-cluster +eu-west\/b +(\d+) +\1 +0 +0 +cpu_utilization +0\.31\d +\1/.exec(text);
    expect(Number(zoneA?.[1] ?? 0) + Number(zoneB?.[1] ?? 0)).toBe(18);
    if (zoneA !== null) {
      expect(text).toMatch(new RegExp(`^ +mem_utilization +0\\.450 +${zoneA[1]}$`, "m"));
      expect(text).toMatch(new RegExp(`^ +application_utilization +0\\.300 +${zoneA[1]}$`, "m"));
      expect(text).toMatch(new RegExp(`^ +named_metrics\\.queue_depth +\\d+(\\.\\d+)? +${zoneA[1]}$`, "m"));
    }
    expect(text).not.toMatch(/^ +named_metrics\.cache_hits/m);
    expect(text).toContain("[control plane] NACK from demo-client");
    expect(text).toContain("ambient [INVALID_ARGUMENT] invalid resource demo-cluster: lb_policy");
    expect(text).toContain("ambient [PERMISSION_DENIED]");
    expect(text).toContain("ambient [NOT_FOUND] resource demo.example was removed");
    // DPDS: the parameters, the variant each subscription holds, and the switch with no gap.
    expect(text).toMatch(
      /\[dpds-wrapper\] DPDS resource dynamic-parameters \(version \d+\): no parameters for any type/,
    );
    expect(text).toMatch(
      /\[dpds-wrapper\] DPDS resource dynamic-parameters \(version \d+\): envoy\.config\.cluster\.v3\.Cluster \{track=stable\}/,
    );
    expect(text).toContain("[client] CSDS: demo-cluster{track=stable} (ACKED) holds the variant track=stable");
    const switchStep = text.slice(text.indexOf("\n8. "), text.indexOf("the client's CSDS dump"));
    expect(switchStep).toMatch(
      /\[dpds-wrapper\] DPDS resource dynamic-parameters \(version \d+\): envoy\.config\.cluster\.v3\.Cluster \{track=canary\}/,
    );
    expect(text).toContain(
      "demo-cluster: the plain name's removal is expected (the variants replace it); the watcher keeps its cluster until {track=stable} answers",
    );
    expect(text).not.toContain("not passed to the watcher");
    expect(text).not.toMatch(/held back until/);
    expect(switchStep).toContain("cancels stable only once\n   canary has answered (make-before-break)");
    expect(switchStep).toContain("demo-cluster: moving from {track=stable} to {track=canary}");
    expect(switchStep).toMatch(/CDS demo-cluster +v\S+ +EDS service demo-eds-canary/);
    expect(switchStep).toMatch(/EDS demo-eds-canary +v\S+ +1 locality, 1 endpoint: 10\.0\.9\.1:8080/);
    expect(switchStep).not.toMatch(/CDS demo-cluster +(error|ambient) /);
    expect(switchStep).toContain("[client] CSDS: demo-cluster{track=canary} (ACKED) holds the variant track=canary");
    expect(switchStep).toContain("the cluster watcher was told 1 update(s) and 0 error(s) during the switch");
    expect(text).toMatch(/Listener +demo\.example +DOES_NOT_EXIST/);
    expect(text).toMatch(/DynamicParameterConstraintsMap +dynamic-parameters +ACKED/);
    expect(text).toMatch(/Cluster +demo-cluster\{track=canary\} +ACKED/);
    expect(text).not.toMatch(/Cluster +demo-cluster(\{track=stable\})? +/);
    expect(text).toMatch(/ClusterLoadAssignment +demo-eds-canary +ACKED/);
    expect(text).toContain('(last error: "<version>: <details>", the version of the response the error came with;');
    // The words a newcomer meets are explained where they first appear; the end says what to try next.
    for (const explained of [
      "DPDS, the dynamic parameters discovery service, is how the",
      '("ambient": an error the watcher is told while the resource it has stays in force)',
      "(TP3: the xDS proposal that lets a server send an error in place of one resource)",
      "(A88: gRPC's proposal on xDS data errors",
      "lb xds_wrr_locality_experimental (weighted across localities, round robin within each)",
    ]) {
      expect(text).toContain(explained);
    }
    expect(text.slice(text.indexOf("\nnext:"))).toMatch(/examples\/connect-greeter[\s\S]*npx xdskit --help/);
  });
});
