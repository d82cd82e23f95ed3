// The default transport over real HTTP/2 with TLS: a bootstrap `tls` credential with a CA file reaches a TLS ADS
// server; a client that does not trust the server's certificate gets a connectivity error, not a crash.
import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsClient, type XdsClient } from "../src/index.js";
import { recordingWatcher, summarize } from "./support/recorder.js";
import { listenerAny, type TestListener, testListenerType } from "./support/test-types.js";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

let server: http2.Http2SecureServer;
let port = 0;
const sessions = new Set<http2.ServerHttp2Session>();

beforeAll(async () => {
  // A minimal ADS server: answers each subscription with a listener per requested name.
  const routes = (router: ConnectRouter) =>
    router.service(AggregatedDiscoveryService, {
      async *streamAggregatedResources(requests) {
        let version = 0;
        for await (const request of requests) {
          if (request.responseNonce !== "" || request.resourceNames.length === 0) continue;
          version += 1;
          yield create(DiscoveryResponseSchema, {
            typeUrl: request.typeUrl,
            versionInfo: String(version),
            nonce: `n${version}`,
            resources: request.resourceNames.map((name) => listenerAny(name, "tls")),
          });
        }
      },
    });
  server = http2.createSecureServer(
    { key: readFileSync(fixture("server-key.pem")), cert: readFileSync(fixture("server-cert.pem")) },
    connectNodeAdapter({ routes }),
  );
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const s of sessions) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function clientWith(channelCreds: unknown[]): XdsClient {
  return createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: `localhost:${port}`, channel_creds: channelCreds }],
      node: { id: "tls-node" },
    },
    env: {},
  });
}

async function until<T>(read: () => T[], count: number): Promise<T[]> {
  for (let i = 0; i < 200 && read().length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return read();
}

describe("TLS channel credentials", () => {
  it("reach a TLS server whose certificate the CA file trusts", async () => {
    const client = clientWith([{ type: "tls", config: { ca_certificate_file: fixture("server-cert.pem") } }]);
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "secure", w);
    const events = await until(() => w.events, 1);
    expect(summarize(events)).toEqual(["resource:1:secure"]);
    expect(events[0]?.kind === "resource" && events[0].resource.statPrefix).toBe("tls");
    await client.close();
  });

  it("fail with a connectivity error when the certificate is not trusted", async () => {
    const client = clientWith([{ type: "tls" }]);
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "secure", w);
    const events = await until(() => w.events, 1);
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    await client.close();
  });
});
