// A route to a cluster that does not exist, over real HTTP/2 against the control plane, SotW and delta: calls fail
// UNAVAILABLE (A88: never NOT_FOUND) as soon as a CDS response says the cluster does not exist. The xDS client's
// clock never fires its 15 s does-not-exist timer, and the control plane holds CDS responses until the test lets
// them go: a call that fails did so because of the response, after it arrived.
//
// What says so: in delta, the server's removal of the name or a TP3 NOT_FOUND; in state of the world, a TP3
// NOT_FOUND. A SotW response that merely omits a name the client never received does not say so (the xDS protocol's
// "Knowing When a Requested Resource Does Not Exist": the response may predate the request naming it), so the
// does-not-exist timer decides there, as in grpc-go and grpc-js-xds (docs/decisions.md#connect-xds-missing-resources).
import { Code, ConnectError } from "@connectrpc/connect";
import {
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  createManagementServer,
  type ManagementServer,
} from "@xdskit/control-plane";
import type { XdsClient } from "@xdskit/xds-client";
import { type Clock, createXdsClientWithInternals, systemClock } from "@xdskit/xds-client/internal";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { echoClient } from "./support/echo-client.js";
import { NODE_ID } from "./support/harness.js";

const DOES_NOT_EXIST_TIMER_MS = 15_000;

/** The system clock, except that the does-not-exist timer is kept (not started) until the test fires it. */
function clockWithoutResourceTimer(): Clock & { fireResourceTimers(): void } {
  const kept: (() => void)[] = [];
  return {
    now: systemClock.now,
    setTimeout: (callback, ms) => {
      if (ms !== DOES_NOT_EXIST_TIMER_MS) return systemClock.setTimeout(callback, ms);
      kept.push(callback);
      return undefined;
    },
    clearTimeout: (handle) => {
      if (handle !== undefined) systemClock.clearTimeout(handle);
    },
    fireResourceTimers: () => {
      for (const callback of kept.splice(0)) callback();
    },
  };
}

/** Lets every pending I/O callback and timer of 0 ms run a few times. */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

for (const apiType of ["GRPC", "DELTA_GRPC"] as const) {
  describe(`a route to a missing cluster (${apiType === "GRPC" ? "state of the world" : "delta"})`, () => {
    let server: ManagementServer;
    let client: XdsClient;
    let clock: ReturnType<typeof clockWithoutResourceTimer>;
    let transport: XdsTransport;

    beforeEach(async () => {
      server = await createManagementServer();
      server.setSnapshot([
        buildListener({ name: "missing", routeConfigName: "missing-route" }),
        buildRouteConfiguration({ name: "missing-route", cluster: "nope" }),
      ]);
      clock = clockWithoutResourceTimer();
      client = createXdsClientWithInternals(
        {
          bootstrap: {
            xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
            node: { id: NODE_ID },
          },
        },
        { clock },
      );
      transport = createXdsTransport({ target: "xds:///missing", client });
    });
    afterEach(async () => {
      await transport.close();
      await client.close();
      await server.close();
    });

    /** Starts a call with CDS responses held; resolves once the CDS answer is built and the call still waits. */
    async function callWhileCdsHeld(): Promise<{ outcome: Promise<ConnectError | string>; settled: () => boolean }> {
      server.hooks.hold({ typeUrl: CDS_TYPE_URL });
      let settled = false;
      const outcome = echoClient(transport)
        .unary({ value: "x" })
        .then(
          (response) => response.value,
          (error: unknown) => ConnectError.from(error),
        )
        .finally(() => {
          settled = true;
        });
      await server.hooks.waitForResponse((r) => r.typeUrl === CDS_TYPE_URL && r.delivery === "held");
      await turns();
      return { outcome, settled: () => settled };
    }

    it("fails the call UNAVAILABLE once a CDS response with a TP3 NOT_FOUND for it arrives", async () => {
      server.setResourceError(CDS_TYPE_URL, "nope", { code: Code.NotFound, message: "no such cluster" });
      const call = await callWhileCdsHeld();
      expect(call.settled()).toBe(false);
      server.hooks.release();
      const error = await call.outcome;
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.Unavailable);
      expect((error as ConnectError).rawMessage).toBe(
        `xDS Cluster "nope" does not exist (server: no such cluster) (xDS node ID "${NODE_ID}")`,
      );
    });

    if (apiType === "DELTA_GRPC") {
      it("fails the call UNAVAILABLE once the delta response removing the name arrives", async () => {
        const call = await callWhileCdsHeld();
        expect(call.settled()).toBe(false);
        server.hooks.release();
        const error = (await call.outcome) as ConnectError;
        expect(error.code).toBe(Code.Unavailable);
        expect(error.rawMessage).toMatch(
          new RegExp(
            `^xDS Cluster "nope" does not exist on the xDS server \\(version \\d+\\) \\(xDS node ID "${NODE_ID}"\\)$`,
          ),
        );
      });
    } else {
      it("waits for the does-not-exist timer when the SotW server has nothing to say about the name", async () => {
        // The control plane sends no CDS response: it has no cluster for this stream.
        let settled = false;
        const outcome = echoClient(transport)
          .unary({ value: "x" })
          .then(
            (response) => response.value,
            (error: unknown) => ConnectError.from(error),
          )
          .finally(() => {
            settled = true;
          });
        await server.hooks.waitForRequest(
          (r) => r.typeUrl === CDS_TYPE_URL && r.kind === "sotw" && r.request.resourceNames.includes("nope"),
        );
        await turns();
        expect(settled).toBe(false);
        clock.fireResourceTimers();
        const error = (await outcome) as ConnectError;
        expect(error.code).toBe(Code.Unavailable);
        expect(error.rawMessage).toBe(`xDS Cluster "nope" does not exist (xDS node ID "${NODE_ID}")`);
      });
    }
  });
}
