// The echo backends of the connect-xds benchmarks (workers/echo-backend-worker.ts), each a child process so the CPU
// measured in the benchmark's process is the client's, and the xDS set-up that routes a listener to one of them.
import { type ChildProcess, fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
} from "@xdskit/control-plane";

const worker = join(dirname(fileURLToPath(import.meta.url)), "..", "workers", "echo-backend-worker.js");

export interface EchoBackend {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  readonly child: ChildProcess;
  /** The backend process's CPU time so far, in microseconds. */
  cpuUs(): Promise<number>;
  /**
   * When (ms since the epoch) its first connection, request, handler call and finished response came since the last
   * call (connect kind only); then forgets them.
   */
  marks(): Promise<Partial<Record<"connection" | "request" | "handler" | "finish", number>>>;
}

/** Sends `request` to the worker and resolves with the `key` of its first answer that has one. */
function ask<T>(child: ChildProcess, request: string, key: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (!(key in message)) return;
      child.off("message", onMessage);
      resolve(message[key] as T);
    };
    child.on("message", onMessage);
    child.send(request);
  });
}

/** `kind`: connect-node's adapter, or the minimal node:http2 echo (see the worker). */
export function startEchoBackend(name: string, kind: "connect" | "h2" = "connect"): Promise<EchoBackend> {
  const child = fork(worker, [name, kind], { stdio: "inherit" });
  const cpuUs = () => ask<number>(child, "cpu", "cpuUs");
  const marks = () =>
    ask<Partial<Record<"connection" | "request" | "handler" | "finish", number>>>(child, "marks", "marks");
  return new Promise((resolve, reject) => {
    child.once("message", (message: { port: number }) =>
      resolve({ address: `127.0.0.1:${message.port}`, child, cpuUs, marks }),
    );
    child.once("error", reject);
  });
}

/** Listener `name` -> its route -> cluster `cluster` -> the endpoints at `addresses`. */
export function echoResources(name: string, cluster: string, addresses: readonly string[]) {
  return [
    buildListener({ name, routeConfigName: `${name}-route` }),
    buildRouteConfiguration({ name: `${name}-route`, cluster }),
    buildCluster({ name: cluster }),
    buildClusterLoadAssignment({ clusterName: cluster, localities: [{ zone: "z", endpoints: [...addresses] }] }),
  ];
}

/** A bootstrap for both xDS clients (grpc-js-xds requires a node locality). */
export function benchBootstrap(serverAddress: string) {
  return {
    xds_servers: [{ server_uri: serverAddress, channel_creds: [{ type: "insecure" }] }],
    node: { id: "bench-client", cluster: "bench", locality: { region: "r", zone: "z" } },
  };
}
