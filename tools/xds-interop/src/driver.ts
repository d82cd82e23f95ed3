// The test driver: runs one case against one client kind in a world of its own, and gives the case what
// run_xds_tests.py's helpers give it: a running test client, blocks of RPCs polled until a condition holds, and
// single blocks that must hold.
import { type BlockCheck, describeBlock, InteropAssertionError } from "./checks.js";
import type { InteropClient, InteropClientKind, RpcMethod } from "./client-adapter.js";
import { type BlockStats, type ClientConfig, type LoadClient, startLoadClient } from "./load-client.js";
import type { InteropProfile } from "./profile.js";
import { createWorld, type InteropWorld } from "./world.js";

export interface ClientInit {
  readonly qps: number;
  /** Default UnaryCall only. */
  readonly types?: readonly RpcMethod[];
  readonly metadata?: ClientConfig["metadata"];
  /** The deadline of each RPC; default the profile's. */
  readonly timeoutMs?: number;
  /** RPCs in flight at most; default the profile's (circuit_breaking needs more). */
  readonly maxInFlight?: number;
}

export interface CaseContext {
  readonly world: InteropWorld;
  readonly profile: InteropProfile;
  /** Starts the test client: one channel to the world's target, sending at `qps` (once per case). */
  startClient(init: ClientInit): LoadClient;
  /** Polls blocks of `rpcs` RPCs until one passes `check`; fails after `profile.waitMs` with the last block. */
  until(what: string, check: BlockCheck, rpcs: number): Promise<BlockStats>;
  /** The next block of `rpcs` RPCs must pass `check`. */
  expectBlock(what: string, check: BlockCheck, rpcs: number): Promise<BlockStats>;
  /** `until`, then the block after it must pass too: the client has settled, not passed by chance. */
  steady(what: string, check: BlockCheck, rpcs: number): Promise<BlockStats>;
  /** Why the client under test is known to fail this sub-case, if it is: the case then skips it. */
  knownBug(subCase: string): string | undefined;
  /** The failure codes a call past its deadline may end with for this client: DEADLINE_EXCEEDED (4), maybe CANCELLED. */
  readonly deadlineCodes: readonly number[];
  /** Fails the case with `message` unless `condition`. */
  check(condition: boolean, message: () => string): void;
  trace(line: string): void;
}

export interface InteropCase {
  /** The document's name for it. */
  readonly name: string;
  /** The client runs with `--fail_on_failed_rpcs`: no RPC may fail once one has succeeded. */
  readonly failOnFailedRpcs: boolean;
  run(context: CaseContext): Promise<void>;
}

export interface CaseReport {
  /** Sub-cases skipped for a known bug of the client, with the reason. */
  readonly skipped: readonly { readonly subCase: string; readonly reason: string }[];
}

export interface RunOptions {
  readonly profile: InteropProfile;
  readonly trace?: (line: string) => void;
  /** The client gets its configuration through an @xdskit/xds-relay (world.ts). */
  readonly relay?: boolean;
}

export async function runCase(
  kind: InteropClientKind,
  testCase: InteropCase,
  options: RunOptions,
): Promise<CaseReport> {
  const { profile } = options;
  const trace = options.trace ?? (() => {});
  const world = await createWorld({
    nodeId: `xds-interop/${kind.name}/${testCase.name}`,
    waitMs: profile.waitMs,
    ...(options.relay ? { relay: true } : {}),
  });
  const skipped: { subCase: string; reason: string }[] = [];
  let client: InteropClient | undefined;
  let load: LoadClient | undefined;
  // RPCs per second across the configured types, for block deadlines.
  let rate = 1;

  const blockTimeoutMs = (rpcs: number) => (2 * rpcs * 1000) / rate + profile.rpcTimeoutMs + 2_000;
  const requireLoad = (): LoadClient => {
    if (!load) throw new Error(`${testCase.name}: startClient() first`);
    return load;
  };
  const expectBlock = async (what: string, check: BlockCheck, rpcs: number) => {
    const stats = await requireLoad().stats(rpcs, blockTimeoutMs(rpcs));
    const problem = check(stats);
    if (problem) throw new InteropAssertionError(`${what}: ${problem} (block of ${rpcs}: ${describeBlock(stats)})`);
    trace(`${what}: ${describeBlock(stats)}`);
    return stats;
  };
  const until = async (what: string, check: BlockCheck, rpcs: number) => {
    const deadline = performance.now() + profile.waitMs;
    for (let blocks = 1; ; blocks++) {
      const stats = await requireLoad().stats(rpcs, blockTimeoutMs(rpcs));
      const problem = check(stats);
      if (!problem) {
        trace(`${what}: held after ${blocks} block(s) of ${rpcs}`);
        return stats;
      }
      if (performance.now() >= deadline) {
        throw new InteropAssertionError(
          `${what}: did not hold within ${profile.waitMs} ms (${blocks} blocks of ${rpcs}); last: ${problem} (${describeBlock(stats)})`,
        );
      }
    }
  };

  const context: CaseContext = {
    world,
    profile,
    startClient(init) {
      if (load) throw new Error(`${testCase.name}: one client per case`);
      const types = init.types ?? ["UnaryCall"];
      rate = init.qps * types.length;
      client = kind.create({ target: world.target, bootstrap: world.bootstrap });
      load = startLoadClient({
        client,
        qps: init.qps,
        maxInFlight: init.maxInFlight ?? profile.maxInFlight,
        config: {
          types,
          timeoutMs: init.timeoutMs ?? profile.rpcTimeoutMs,
          ...(init.metadata ? { metadata: init.metadata } : {}),
        },
      });
      return load;
    },
    until,
    expectBlock,
    async steady(what, check, rpcs) {
      await until(what, check, rpcs);
      return expectBlock(`${what} (the block after)`, check, rpcs);
    },
    deadlineCodes: kind.deadlineMayReadCancelled === undefined ? [4] : [4, 1],
    knownBug(subCase) {
      const reason = kind.knownBugs?.[`${testCase.name}/${subCase}`];
      if (reason !== undefined) skipped.push({ subCase, reason });
      return reason;
    },
    check(condition, message) {
      if (!condition) throw new InteropAssertionError(message());
    },
    trace,
  };

  try {
    await testCase.run(context);
    // --fail_on_failed_rpcs judges every RPC, so the ones in flight complete first; other cases cancel them
    // (keep-open RPCs, like circuit_breaking's, never end by themselves).
    if (load && testCase.failOnFailedRpcs) {
      await load.stop();
      trace("the RPCs in flight completed");
      const { failuresAfterFirstSuccess } = load.accumulated();
      if (failuresAfterFirstSuccess > 0) {
        throw new InteropAssertionError(
          `--fail_on_failed_rpcs: ${failuresAfterFirstSuccess} RPCs failed after the first success (${JSON.stringify(load.accumulated().result)})`,
        );
      }
    }
  } finally {
    // Stop sending, cancel what is in flight (the client's close), then the servers.
    const stopping = load?.stop();
    await client?.close();
    await stopping;
    trace("the client is closed");
    await world.close();
    trace("the control plane and backends are closed");
  }
  return { skipped };
}
