// A real etcd for the CLI's etcd tests (tools/test-etcd), closed after each test, and a free port.
import { type EtcdInstance, etcdAvailable, type StartEtcdOptions, startEtcd } from "@xdskit/test-etcd";

export { freePort } from "@xdskit/test-etcd";

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
