// A control-plane replica as a benchmark peer: @xdskit/control-plane with content versions, fed from etcd by
// @xdskit/etcd-source (`etcd`), or loaded by its API (`clusters`); `change` sets cluster-0 through its API; the
// first ADS request of each node `armRequests` names is reported with its time (failover measurements).
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { connectEtcd, createEtcdSource } from "@xdskit/etcd-source";
import { type Message, now, serve } from "./peer-process.js";

export const clusterOf = (i: number, version: number) =>
  buildCluster({ name: `cluster-${i}`, edsServiceName: version === 0 ? "" : `cluster-${i}-v${version}` });

export function runReplica(): void {
  let server: ManagementServer | undefined;
  const awaited = new Set<string>();
  serve(async (message: Message, send) => {
    if (message.type === "start") {
      server = await createManagementServer({
        contentVersions: true,
        historyLimit: 0,
        listen: false,
        ...(message.port ? { port: message.port as number } : {}),
      });
      if (message.etcd) {
        const etcd = connectEtcd({ endpoints: [message.etcd as string] });
        const source = createEtcdSource({ etcd, server });
        await source.ready;
      } else {
        server.setResources(Array.from({ length: message.clusters as number }, (_, i) => clusterOf(i, 0)));
      }
      server.hooks.on("request", (event) => {
        const node = event.node?.id;
        if (node === undefined || !awaited.delete(node)) return;
        send({ type: "request", at: now(), node });
      });
      await server.start();
      send({ type: "ready", address: server.address, port: server.port });
    } else if (message.type === "change") {
      server?.setResource(clusterOf(0, message.version as number));
    } else if (message.type === "armRequests") {
      for (const node of message.nodes as string[]) awaited.add(node);
      send({ type: "armed" });
    } else if (message.type === "disarm") {
      awaited.clear();
      send({ type: "disarmed" });
    } else if (message.type === "stats") {
      const streams = server?.streams() ?? [];
      send({
        type: "stats",
        rss: process.memoryUsage.rss(),
        streams: streams.length,
        nodes: streams.flatMap((s) => (s.node?.id ? [s.node.id] : [])),
      });
    }
  });
}
