// A real etcd for the CLI's etcd tests (tools/test-etcd), closed after each test, and a free port.
import { createServer } from "node:net";
import { type EtcdInstance, etcdAvailable, type StartEtcdOptions, startEtcd } from "@xdskit/test-etcd";
import { afterEach } from "vitest";

/** Whether etcd is installed: without it these tests are skipped (npm test says so, with the install command). */
export const hasEtcd = etcdAvailable();

const started: EtcdInstance[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((etcd) => etcd.close()));
});

export async function testEtcd(options: StartEtcdOptions = {}): Promise<EtcdInstance> {
  const etcd = await startEtcd(options);
  started.push(etcd);
  return etcd;
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
