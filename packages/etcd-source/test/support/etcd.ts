// The etcd the tests run against (tools/test-etcd), and the etcd-source pieces most tests build on.
import { type EtcdInstance, etcdAvailable, type StartEtcdOptions, startEtcd } from "@xdskit/test-etcd";
import { afterEach } from "vitest";
import { connectEtcd, type EtcdConnection, type EtcdConnectionOptions } from "../../src/index.js";

/** Whether etcd is installed: without it the etcd tests are skipped (npm test says so, with the install command). */
export const hasEtcd = etcdAvailable();

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs after the current test, pass or fail, in reverse order of registration. */
export function onCleanup(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

afterEach(async () => {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
});

/** An etcd for this test, closed (and its data removed) after it. */
export async function testEtcd(options: StartEtcdOptions = {}): Promise<EtcdInstance> {
  const etcd = await startEtcd(options);
  onCleanup(() => etcd.close());
  return etcd;
}

/** A connection to `etcd`, closed after the test. */
export function connect(etcd: EtcdInstance | string, options: Partial<EtcdConnectionOptions> = {}): EtcdConnection {
  const connection = connectEtcd({
    endpoints: [typeof etcd === "string" ? etcd : etcd.endpoint],
    requestTimeoutMs: 5_000,
    ...options,
  });
  onCleanup(() => connection.close());
  return connection;
}

/** A logger that keeps every line, for assertions on warnings. */
export function recordingLogger(): { lines: string[]; logger: import("../../src/index.js").Logger } {
  const lines: string[] = [];
  const keep =
    (level: string) =>
    (message: string): void => {
      lines.push(`${level} ${message}`);
    };
  return { lines, logger: { error: keep("error"), warn: keep("warn"), info: keep("info"), debug: () => {} } };
}
