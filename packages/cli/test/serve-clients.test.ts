// What `xdskit serve` tells about its clients, and what it serves besides ADS, over real HTTP/2 on 127.0.0.1:
//  1. A client NACKs a cluster: serve prints the NACK (no --verbose needed) with the client's node id;
//     `xdskit csds <serve>` shows that stream as a client: the cluster NACKED with the client's error, the listener
//     ACKED; grpc.health.v1.Health answers SERVING for "" and NOT_FOUND for another service (a grpc-js client).
//  2. --verbose: each line starts with the time; streams opened and closed, requests and responses, with the node
//     id; a client that leaves is a normal close, not an error.
//  3. --tls-cert/--tls-key/--tls-ca: mTLS; a client with a certificate the CA signed gets the resources, through
//     @xdskit/xds-client and through `xdskit list` with the same bootstrap.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { createTestCa, issueLocalhost, writeCertificate } from "@xdskit/test-pki";
import { clusterResourceType, createXdsClient, listenerResourceType, type XdsClient } from "@xdskit/xds-client";
import { afterAll, describe, expect, it } from "vitest";
import { CLUSTER_YAML, follow, listenerJson } from "./support/resources.js";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const BAD_CLUSTER = JSON.stringify({
  "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  name: "bad",
  type: "EDS",
  edsClusterConfig: { edsConfig: { ads: {} } },
  lbPolicy: "RANDOM",
});

const addressOf = (banner: string) => /on (127\.0\.0\.1:\d+) /.exec(banner)?.[1] ?? "";

/** A unary call of grpc.health.v1.Health/Check with grpc-js, request and response as raw protobuf bytes. */
function healthCheck(address: string, request: Buffer): Promise<{ code: number; bytes?: Buffer }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (b: Buffer) => b,
      (b: Buffer) => b,
      request,
      (error, bytes) => {
        client.close();
        resolve(error ? { code: error.code } : { code: 0, ...(bytes ? { bytes } : {}) });
      },
    );
  });
}

describe("xdskit serve and its clients", () => {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-serve-clients-"));
  const clients: XdsClient[] = [];

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints NACKs without --verbose, shows each stream over CSDS, and answers gRPC health", async () => {
    const files = mkdtempSync(join(dir, "nack-"));
    writeFileSync(join(files, "bad.json"), BAD_CLUSTER);
    writeFileSync(join(files, "listener.json"), listenerJson("echo.test"));
    const serve = startXdskit(["serve", files, "--port", "0"]);
    const address = addressOf(await serve.waitFor(/^serving .*\n/));
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "cli-test" },
      },
    });
    clients.push(client);
    const listener = follow(client, listenerResourceType, "echo.test");
    const cluster = follow(client, clusterResourceType, "bad");
    await listener.until((r) => r.ok);
    await cluster.until((r) => !r.ok);

    const nack = await serve.waitFor(/ NACK \[.*\n/, { from: "stderr" });
    expect(nack).toMatch(/^\S+Z NACK \[stream \d+, node cli-test\] Cluster: .*bad: lb_policy/m);

    const csds = await runXdskit(["csds", address]);
    expect(csds.code).toBe(0);
    const [table, legend] = csds.stdout.trimEnd().split("\n\n");
    expect(legend).toMatch(/^last error: "<version>: <details>"/);
    const lines = (table ?? "").split("\n").map((line) => line.replace(/ {2,}/g, " "));
    expect(lines[0]).toMatch(/^client stream \d+ \(state of the world\) from 127\.0\.0\.1:\d+, node cli-test$/);
    expect(lines.slice(3).sort()).toEqual([
      expect.stringMatching(/^Cluster bad NACKED \d+ \d+: .*lb_policy/),
      expect.stringMatching(/^Listener echo\.test ACKED \d+$/),
    ]);

    expect(await healthCheck(address, Buffer.alloc(0))).toEqual({ code: 0, bytes: Buffer.from([0x08, 0x01]) });
    const unknown = Buffer.concat([Buffer.from([0x0a, 4]), Buffer.from("nope")]);
    expect(await healthCheck(address, unknown)).toEqual({ code: grpc.status.NOT_FOUND });
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("--verbose: timestamped lines with each stream's node id; a client leaving is a normal close", async () => {
    const files = mkdtempSync(join(dir, "verbose-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const serve = startXdskit(["serve", files, "--port", "0", "--verbose"]);
    const address = addressOf(await serve.waitFor(/^serving .*\n/));
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "verbose-node" },
      },
    });
    await follow(client, clusterResourceType, "echo").until((r) => r.ok);
    await client.close();
    const log = await serve.waitFor(/closed \[stream \d+, node verbose-node\] .*\n/, { from: "stderr" });
    const time = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
    for (const line of [
      `opened \\[stream 1\\] state of the world from 127\\.0\\.0\\.1:\\d+`,
      `subscribe \\[stream 1, node verbose-node\\] Cluster version "" \\[echo\\]`,
      `response \\[stream 1, node verbose-node\\] Cluster version "\\d+" \\[echo\\]`,
      `closed \\[stream 1, node verbose-node\\] the client (went away|closed it)`,
    ]) {
      expect(log).toMatch(new RegExp(`^${time} ${line}$`, "m"));
    }
    expect(log).not.toMatch(/error/i);
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("--verbose: a stream whose grpc-timeout elapses is logged with that reason and its status", async () => {
    const files = mkdtempSync(join(dir, "deadline-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const serve = startXdskit(["serve", files, "--port", "0", "--verbose"]);
    const address = addressOf(await serve.waitFor(/^serving .*\n/));
    // A raw HTTP/2 call, so that only the server's timer can end it (a gRPC client cancels at its own deadline).
    const session = http2.connect(`http://${address}`);
    const call = session.request({
      ":method": "POST",
      ":path": "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": "300m",
    });
    const message = toBinary(
      DiscoveryRequestSchema,
      create(DiscoveryRequestSchema, {
        node: { id: "deadline-node" },
        typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        resourceNames: ["echo"],
      }),
    );
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    call.write(frame);
    call.resume();
    const status = await new Promise<string | undefined>((resolve) => {
      call.on("trailers", (trailers) => resolve(String(trailers["grpc-status"])));
      call.on("close", () => resolve(undefined));
    });
    session.close();
    expect(status).toBe("4");
    const log = await serve.waitFor(/closed \[stream \d+, node deadline-node\] .*\n/, { from: "stderr" });
    expect(log).toMatch(
      /closed \[stream 1, node deadline-node\] its grpc-timeout elapsed \(status 4: deadline exceeded: the call's grpc-timeout \(300m\) elapsed\)$/m,
    );
    expect((await serve.interrupt()).code).toBe(0);
  });

  it("serves mTLS with --tls-cert, --tls-key and --tls-ca", async () => {
    const files = mkdtempSync(join(dir, "tls-"));
    writeFileSync(join(files, "cluster.yaml"), CLUSTER_YAML);
    const ca = createTestCa();
    writeFileSync(join(dir, "ca.pem"), ca.cert);
    const server = writeCertificate(dir, "server", issueLocalhost(ca));
    const clientCert = writeCertificate(dir, "client", ca.issue({ commonName: "tls-node" }));
    const serve = startXdskit([
      "serve",
      files,
      "--port",
      "0",
      "--tls-cert",
      server.certFile,
      "--tls-key",
      server.keyFile,
      "--tls-ca",
      join(dir, "ca.pem"),
    ]);
    const banner = await serve.waitFor(/^serving .*\n/);
    expect(banner).toMatch(/\(mTLS; ADS, CSDS, health\)/);
    const bootstrap = {
      xds_servers: [
        {
          server_uri: addressOf(banner),
          channel_creds: [
            {
              type: "tls",
              config: {
                ca_certificate_file: join(dir, "ca.pem"),
                certificate_file: clientCert.certFile,
                private_key_file: clientCert.keyFile,
              },
            },
          ],
        },
      ],
      node: { id: "tls-node" },
    };
    const client = createXdsClient({ bootstrap });
    clients.push(client);
    const cluster = await follow(client, clusterResourceType, "echo").until(() => true);
    expect(cluster.ok).toBe(true);
    writeFileSync(join(dir, "tls-bootstrap.json"), JSON.stringify(bootstrap));
    const list = await runXdskit(["list", "eds", "--bootstrap", join(dir, "tls-bootstrap.json")]);
    expect([list.code, list.stdout, list.stderr]).toEqual([0, "echo\n", ""]);
    expect((await serve.interrupt()).code).toBe(0);
  });
});
