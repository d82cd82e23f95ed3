// A regex RE2 refuses, sent by @xdskit/control-plane over real HTTP/2: the client NACKs the route configuration with
// a detail naming the regex's field and the engine's reason (docs/decisions.md#regular-expressions-from-xds), and the
// watcher keeps what it had. JavaScript's RegExp takes `a{1001}`, so a RegExp-based check would ACK it.
import { create } from "@bufbuild/protobuf";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createXdsClient, type XdsClient } from "../src/index.js";
import { type RouteConfigurationUpdate, routeConfigurationResourceType } from "../src/resources/index.js";
import { recordingWatcher, summarize, type WatchEvent } from "./support/recorder.js";

const RDS = routeConfigurationResourceType.typeUrl;

let server: ManagementServer;
let client: XdsClient;

beforeEach(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
  client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
      node: { id: "regex-node" },
    },
    env: {},
  });
});

afterEach(async () => {
  await client.close();
  await server.close();
});

const routes = (regex: string) =>
  create(RouteConfigurationSchema, {
    name: "rc",
    virtualHosts: [
      {
        domains: ["*"],
        routes: [
          {
            match: { pathSpecifier: { case: "safeRegex", value: { regex } } },
            action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "c" } } },
          },
        ],
      },
    ],
  });

it("ACKs a path regex at RE2's repeat limit and NACKs one past it, naming the field", async () => {
  server.setResource(routes("/a{1000}"));
  const w = recordingWatcher<RouteConfigurationUpdate>();
  client.watch(routeConfigurationResourceType, "rc", w);
  const ack = await server.hooks.waitForRequest((r) => r.disposition === "ack" && r.typeUrl === RDS);
  expect(ack.errorDetail).toBeUndefined();

  server.setResource(routes("/a{1001}"));
  const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack" && r.typeUrl === RDS);
  expect(nack.errorDetail?.message).toContain(
    "virtual_hosts[0].routes[0].match.safe_regex.regex: error creating path matcher: invalid regex: invalid repeat count: `{1001}`",
  );
  const events = summarize(w.take() as WatchEvent<RouteConfigurationUpdate>[]);
  expect(events).toEqual([expect.stringMatching(/^resource:.+:rc$/), "ambient:INVALID_ARGUMENT:nacked"]);
});
