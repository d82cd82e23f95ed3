// `trusted_xds_server` over real TLS against @xdskit/control-plane: as in gRPC (A81), a server feature that lets an
// xDS server set security-sensitive fields; here a route's `auto_host_rewrite`, which a client honours only from a
// server marked trusted. One client, one control plane, two bootstrap entries for it: the top-level server
// (untrusted) and the "trusted" authority's (marked trusted). Each is its own channel, and each route is decoded with
// the trust of the server that sent it.
import { create } from "@bufbuild/protobuf";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { createTestCa, issueLocalhost } from "@xdskit/test-pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsClient, type RouteConfigurationUpdate, routeConfigurationResourceType } from "../src/index.js";
import { type PemDir, pemDir, tlsChannelCreds, writeCa } from "./fixtures/pki.js";
import { recordingWatcher } from "./support/recorder.js";

const TRUSTED_NAME = "xdstp://trusted/envoy.config.route.v3.RouteConfiguration/route";

let server: ManagementServer;
let dir: PemDir;

function rewritingRoute(name: string) {
  return create(RouteConfigurationSchema, {
    name,
    virtualHosts: [
      {
        name: "vh",
        domains: ["*"],
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: "" } },
            action: {
              case: "route",
              value: {
                clusterSpecifier: { case: "cluster", value: "c1" },
                hostRewriteSpecifier: { case: "autoHostRewrite", value: { value: true } },
              },
            },
          },
        ],
      },
    ],
  });
}

beforeAll(async () => {
  const ca = createTestCa();
  dir = pemDir();
  server = await createManagementServer({ tls: issueLocalhost(ca) });
  server.setResources([rewritingRoute("route"), rewritingRoute(TRUSTED_NAME)]);
  writeCa(dir, "ca", ca);
}, 60_000);

afterAll(async () => {
  await server.close();
  dir.remove();
});

async function firstRoute(watch: (w: ReturnType<typeof recordingWatcher<RouteConfigurationUpdate>>) => void) {
  const w = recordingWatcher<RouteConfigurationUpdate>();
  watch(w);
  for (let i = 0; i < 1000 && w.events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const event = w.events[0];
  if (event?.kind !== "resource") throw new Error(`expected a route, got ${JSON.stringify(event)}`);
  const action = event.resource.virtualHosts[0]?.routes[0]?.action;
  return action !== undefined && "autoHostRewrite" in action ? action.autoHostRewrite : undefined;
}

describe("trusted_xds_server", () => {
  it("lets only a server marked trusted turn on auto_host_rewrite", async () => {
    const uri = `localhost:${server.port}`;
    const creds = tlsChannelCreds(`${dir.path}/ca.pem`);
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: uri, channel_creds: creds }],
        authorities: {
          trusted: {
            xds_servers: [{ server_uri: uri, channel_creds: creds, server_features: ["trusted_xds_server"] }],
          },
        },
        node: { id: "n" },
      },
      env: {},
    });
    try {
      const untrusted = await firstRoute((w) => client.watch(routeConfigurationResourceType, "route", w));
      const trusted = await firstRoute((w) => client.watch(routeConfigurationResourceType, TRUSTED_NAME, w));
      expect({ untrusted, trusted }).toEqual({ untrusted: false, trusted: true });
      // Two channels: the feature is part of what makes two server configs the same.
      expect(server.streams()).toHaveLength(2);
    } finally {
      await client.close();
    }
  });
}, 60_000);
