// A replica as tests use it: a management server with content versions, fed by an etcd source; and writing a set
// of resources the way `xdskit apply` does.
import { createManagementServer, type ManagementServer, type ManagementServerOptions } from "@xdskit/control-plane";
import {
  applyEtcdChange,
  createEtcdSource,
  type EtcdConnection,
  type EtcdResource,
  type EtcdSource,
  type EtcdSourceChange,
  type EtcdSourceOptions,
  type EtcdSourceStatus,
  type PlanOptions,
  planEtcdChange,
  type TransactionLimits,
} from "../../src/index.js";
import { onCleanup, recordingLogger } from "./etcd.js";

export interface TestReplica {
  readonly server: ManagementServer;
  readonly source: EtcdSource;
  readonly changes: EtcdSourceChange[];
  readonly statuses: EtcdSourceStatus[];
  readonly log: string[];
}

/** A replica on `etcd`; not awaited (tests that need it loaded await `replica.source.ready`). */
export async function startReplica(
  etcd: EtcdConnection,
  options: Partial<EtcdSourceOptions> & { serverOptions?: ManagementServerOptions } = {},
): Promise<TestReplica> {
  const { serverOptions, ...sourceOptions } = options;
  const server = await createManagementServer({ contentVersions: true, historyLimit: 0, ...serverOptions });
  onCleanup(() => server.close());
  const changes: EtcdSourceChange[] = [];
  const statuses: EtcdSourceStatus[] = [];
  const { lines, logger } = recordingLogger();
  const source = createEtcdSource({
    etcd,
    server,
    logger,
    retryInitialMs: 50,
    retryMaxMs: 500,
    onChange: (change) => changes.push(change),
    onStatus: (status) => statuses.push(status),
    ...sourceOptions,
  });
  onCleanup(() => source.close());
  return { server, source, changes, statuses, log: lines };
}

/** Writes `resources` as the whole content of the prefix (or, with `replace: false`, beside what is there). */
export async function writeResources(
  etcd: EtcdConnection,
  resources: Iterable<EtcdResource>,
  options: Partial<PlanOptions> & { limits?: Partial<TransactionLimits> } = {},
): Promise<number> {
  const plan = await planEtcdChange({ etcd, resources, ...options });
  const { revision } = await applyEtcdChange(etcd, plan, options.limits ? { limits: options.limits } : {});
  return revision;
}

/** Resolves when `check` holds, polling `statuses`-style arrays the source fills (no fixed sleeps elsewhere). */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
