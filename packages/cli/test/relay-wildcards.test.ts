// `xdskit relay`, `list` and `watch` together, as a user runs them (the built binary) on 127.0.0.1:
//  1. `list` and `watch lds '*'` through the relay: wildcard subscriptions served from one upstream wildcard;
//  2. what `relay` prints without --verbose: the upstream reachable at start, each upstream stream as it opens,
//     changes and closes, the upstream going away and coming back, and Ctrl-C;
//  3. `list` and `watch` end at once, with the status, when the server refuses the stream for good (here a relay
//     refusing a wildcard of a type that is not full-state, and a server without delta refusing a delta watch).
import { buildCluster, buildListener, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { afterEach, expect, it } from "vitest";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

let upstream: ManagementServer | undefined;
afterEach(async () => {
  killAll();
  await upstream?.close();
  upstream = undefined;
});

async function startRelay(extra: readonly string[] = []) {
  upstream = await createManagementServer();
  upstream.setResources([
    buildCluster({ name: "a" }),
    buildCluster({ name: "b" }),
    buildListener({ name: "l1", routeConfigName: "r" }),
  ]);
  const relay = startXdskit(["relay", "--upstream", upstream.address, "--listen", "127.0.0.1:0", ...extra]);
  const banner = await relay.waitFor(/^relaying .* on 127\.0\.0\.1:\d+\n/);
  const address = /on (\S+)\n/.exec(banner)?.[1] ?? "";
  return { relay, address, upstream };
}

it("serves `list` and `watch lds '*'` by wildcard, and says which upstream streams are open", async () => {
  const { relay, address, upstream: server } = await startRelay();
  await relay.waitFor(new RegExp(`upstream ${server.address} reachable\\n`));

  const listed = await runXdskit(["list", "cds", "--server", address]);
  expect([listed.code, listed.stdout]).toEqual([0, "a\nb\n"]);
  const watch = startXdskit(["watch", "lds", "*", "--server", address, "--count", "2", "--json"]);
  await watch.waitFor(/"name":"l1"/);
  server.setResource(buildListener({ name: "l2", routeConfigName: "r" }));
  const { code, stdout } = await watch.finished;
  expect(code).toBe(0);
  expect(
    stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).name),
  ).toEqual(["l1", "l2"]);
  // Upstream, the relay asked by wildcard: `*` for each type, nothing by name.
  const types = server.streams()[0]?.types.map((t) => [t.typeUrl.slice(t.typeUrl.lastIndexOf(".") + 1), t.wildcard]);
  expect(types?.sort()).toEqual([
    ["Cluster", true],
    ["Listener", true],
  ]);
  // What the relay printed: its shared stream with its wildcards, a line as it opened or changed (sampled once a
  // second, so the Cluster wildcard may be printed alone first, or together with the Listener one).
  await relay.waitFor(/upstream stream of node "xdskit-relay" \(the relay's, shared\): .*Listener \*\n/);
  expect(relay.stdout()).toMatch(/upstream stream of node "xdskit-relay" \(the relay's, shared\): Cluster \*[;\n]/);

  const { code: stopped, stdout: printed } = await relay.interrupt();
  expect(stopped).toBe(0);
  expect(printed).toMatch(/stopping \(Ctrl-C\)\n.*stopped\n$/);
});

it("says when the upstream goes away and when it comes back", async () => {
  const { relay, address, upstream: server } = await startRelay();
  await relay.waitFor(new RegExp(`upstream ${server.address} reachable\\n`));
  const watch = startXdskit(["watch", "cds", "a", "--server", address]);
  await watch.waitFor(/cds a: version/);
  await server.stop();
  await relay.waitFor(new RegExp(`upstream ${server.address} unreachable: .+\\n`), { timeoutMs: 15_000 });
  await server.start();
  await relay.waitFor(new RegExp(`unreachable: .+\\n[\\s\\S]*upstream ${server.address} reachable\\n`), {
    timeoutMs: 15_000,
  });
  watch.kill();
});

it("ends `list` and `watch` at once, with the status, when the server refuses for good", async () => {
  const { address } = await startRelay();
  // The relay serves wildcards of LDS and CDS only: EDS is UNIMPLEMENTED. (Each command waiting out its --timeout
  // would take the test past its own.)
  const listed = await runXdskit(["list", "eds", "--server", address, "--timeout", "60s"]);
  expect(listed.code).toBe(1);
  expect(listed.stderr).toMatch(/refused the request: UNIMPLEMENTED: .*wildcard/);
  const watched = await runXdskit(["watch", "eds", "*", "--server", address, "--timeout", "60s"]);
  expect(watched.code).toBe(1);
  expect(watched.stderr).toMatch(/the server refused the stream: UNIMPLEMENTED: .*wildcard/);
  // A watch by name, delta, against a server without delta: UNIMPLEMENTED on every retry.
  const noDelta = await createManagementServer({ delta: false });
  try {
    const byName = await runXdskit(["watch", "cds", "a", "--server", noDelta.address, "--delta", "--timeout", "60s"]);
    expect(byName.code).toBe(1);
    expect(byName.stderr).toMatch(/the server refused the stream: UNIMPLEMENTED: delta xDS is not enabled/);
  } finally {
    await noDelta.close();
  }
}, 40_000);
