// `xdskit relay` as a user runs it (the built binary), between an @xdskit/control-plane and an @xdskit/xds-client
// on 127.0.0.1: the client gets the upstream's cluster through the relay, the relay is one upstream stream, Ctrl-C
// exits 0; a wrong command line exits 2 naming the problem.
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { clusterResourceType, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterEach, expect, it } from "vitest";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

let upstream: ManagementServer | undefined;
let client: XdsClient | undefined;
afterEach(async () => {
  await client?.close();
  killAll();
  await upstream?.close();
});

/** Starts `xdskit relay` with `extra` arguments before a control plane serving cluster "echo"; a client gets it. */
async function relayEcho(extra: readonly string[] = []) {
  upstream = await createManagementServer();
  upstream.setResource(buildCluster({ name: "echo" }));
  const relay = startXdskit([
    "relay",
    "--upstream",
    upstream.address,
    "--listen",
    "127.0.0.1:0",
    "--upstream-delta",
    ...extra,
  ]);
  const banner = await relay.waitFor(/^relaying .* on 127\.0\.0\.1:\d+\n/);
  expect(banner).toBe(`relaying ${upstream.address} on ${/on (\S+)\n/.exec(banner)?.[1]}\n`);
  const address = /on (\S+)\n/.exec(banner)?.[1] ?? "";
  client = createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
    env: {},
  });
  const name = await new Promise<string>((resolve, reject) => {
    client?.watch(clusterResourceType, "echo", {
      onResourceChanged: (result) => (result.ok ? resolve(result.resource.name) : reject(result.error)),
      onAmbientError: () => {},
    });
  });
  expect(name).toBe("echo");
  return relay;
}

it("relays the upstream's resources to a client and exits 0 on Ctrl-C", async () => {
  const relay = await relayEcho();
  const streams = upstream?.streams() ?? [];
  expect(streams.map((s) => [s.kind, s.node?.id])).toEqual([["delta", "xdskit-relay"]]);
  expect((await relay.interrupt()).code).toBe(0);
});

it("--verbose prints the trace lines of its upstream client and of its server", async () => {
  const relay = await relayEcho(["--verbose"]);
  const cds = "type\\.googleapis\\.com/envoy\\.config\\.cluster\\.v3\\.Cluster";
  // Upstream: the relay's delta client subscribing to the name; downstream: the response the client got.
  await relay.waitFor(new RegExp(`delta ADS call #\\d+ sending ${cds} \\+1 -0\\n`), { from: "stderr" });
  await relay.waitFor(new RegExp(`response ${cds} version \\S+ nonce \\S+: 1 resources\\n`), { from: "stderr" });
  expect((await relay.interrupt()).code).toBe(0);
});

it("exits 2 without an upstream, or with half of a TLS pair", async () => {
  const missing = await runXdskit(["relay"]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("expected --upstream <host:port>");
  const half = await runXdskit(["relay", "--upstream", "127.0.0.1:1", "--tls-cert", "a.pem"]);
  expect(half.code).toBe(2);
  expect(half.stderr).toContain("--tls-cert and --tls-key go together");
});

it("--upstream takes replicas as IP addresses, the first one dead: it relays from the next", async () => {
  upstream = await createManagementServer();
  upstream.setResource(buildCluster({ name: "echo" }));
  const dead = await createManagementServer();
  const deadAddress = dead.address;
  await dead.close();
  const relay = startXdskit(["relay", "--upstream", `${deadAddress},${upstream.address}`, "--listen", "127.0.0.1:0"]);
  const banner = await relay.waitFor(/^relaying .* on 127\.0\.0\.1:\d+\n/);
  expect(banner).toMatch(new RegExp(`^relaying ipv4:${deadAddress},${upstream.address} on `));
  client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: /on (\S+)\n/.exec(banner)?.[1] ?? "", channel_creds: [{ type: "insecure" }] }],
      node: { id: "n" },
    },
    env: {},
  });
  const events: string[] = [];
  await new Promise<void>((resolve) => {
    client?.watch(clusterResourceType, "echo", {
      onResourceChanged: (result) => {
        events.push(result.ok ? result.resource.name : `error ${result.error.message}`);
        resolve();
      },
      onAmbientError: (error) => {
        events.push(`ambient ${error.message}`);
      },
    });
  });
  expect(events).toEqual(["echo"]);
  const mixed = await runXdskit(["relay", "--upstream", "127.0.0.1:1,cp:2"]);
  expect([mixed.code, mixed.stderr]).toEqual([
    2,
    expect.stringContaining("--upstream with several replicas takes IP addresses"),
  ]);
});
