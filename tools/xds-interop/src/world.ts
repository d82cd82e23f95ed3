// One case's surroundings: its own control plane (and, to run through one, a relay in front of it) and backends on
// 127.0.0.1, and the bootstrap a client of it uses.
// Nothing is shared between cases, so one case's left-over state cannot decide another's result.
import { createManagementServer, type ManagementServer, type ResourceMessage } from "@xdskit/control-plane";
import { createXdsRelay } from "@xdskit/xds-relay";
import { type Backend, type BackendOptions, startBackend } from "./backend.js";
import { InteropAssertionError } from "./checks.js";
import type { BootstrapDocument } from "./client-adapter.js";
import { CLIENT_ZONE, SERVICE_NAME } from "./resources.js";

export interface InteropWorld {
  readonly controlPlane: ManagementServer;
  /** `xds:///` + the service name. */
  readonly target: string;
  readonly bootstrap: BootstrapDocument;
  /**
   * Starts `count` backends named `${group}-0` ... (one instance group), each with `options(i)` if given; they are
   * closed with the world.
   */
  startGroup(
    group: string,
    count: number,
    options?: (index: number) => Omit<BackendOptions, "name">,
  ): Promise<Backend[]>;
  /**
   * Publishes `resources`; then, for each of `answeredTypes`, waits for the first response of that type the client
   * is sent after the change and for the client to ACK it. A NACK fails with the client's error detail.
   */
  publish(resources: readonly ResourceMessage[], answeredTypes?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** The xDS node id of the client: names the case in the control plane's hooks. */
  readonly nodeId: string;
  /** How long the client may take to answer a response. */
  readonly waitMs: number;
  /**
   * Put an @xdskit/xds-relay between the control plane and the client: the client's bootstrap names the relay, and
   * what it is sent and answers is watched on the relay's server.
   */
  readonly relay?: boolean;
}

export async function createWorld(options: WorldOptions): Promise<InteropWorld> {
  const controlPlane = await createManagementServer({ controlPlaneId: "xdskit-xds-interop" });
  const relay = options.relay
    ? await createXdsRelay({
        controlPlaneId: "xdskit-xds-interop-relay",
        retainUnusedMs: 0,
        upstream: {
          bootstrap: {
            xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
            node: { id: `${options.nodeId}/relay` },
          },
          env: {},
        },
      }).catch(async (error: unknown) => {
        await controlPlane.close();
        throw error;
      })
    : undefined;
  const backends: Backend[] = [];
  const bootstrap: BootstrapDocument = {
    xds_servers: [
      {
        server_uri: relay?.address ?? controlPlane.address,
        channel_creds: [{ type: "insecure" }],
        server_features: ["xds_v3"],
      },
    ],
    node: { id: options.nodeId, cluster: "xds-interop", locality: { region: "local", zone: CLIENT_ZONE } },
  };

  const answered = async (typeUrl: string, after: number) => {
    // With a relay, the client is sent responses by the relay (once the relay has the change).
    const { hooks } = relay ?? controlPlane;
    const response = await hooks.waitForResponse((r) => r.typeUrl === typeUrl && r.delivery === "sent", {
      after,
      timeoutMs: options.waitMs,
    });
    const answer = await hooks.waitForRequest(
      (r) => r.typeUrl === typeUrl && r.responseNonce === response.nonce && r.disposition !== "stale",
      { after, timeoutMs: options.waitMs },
    );
    if (answer.disposition === "nack") {
      throw new InteropAssertionError(
        `the client NACKed ${typeUrl} version ${response.versionInfo}: ${answer.errorDetail?.message ?? "(no detail)"}`,
      );
    }
  };

  return {
    controlPlane,
    target: `xds:///${SERVICE_NAME}`,
    bootstrap,
    async startGroup(group, count, options) {
      const started = await Promise.all(
        Array.from({ length: count }, (_, i) => startBackend({ name: `${group}-${i}`, ...options?.(i) })),
      );
      backends.push(...started);
      return started;
    },
    async publish(resources, answeredTypes = []) {
      const mark = (relay ?? controlPlane).hooks.mark();
      controlPlane.setResources(resources);
      await Promise.all(answeredTypes.map((typeUrl) => answered(typeUrl, mark)));
    },
    async close() {
      await relay?.close();
      await Promise.all([controlPlane.close(), ...backends.map((backend) => backend.close())]);
    },
  };
}
