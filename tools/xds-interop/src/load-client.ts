// The xDS interop test client of doc/xds-test-descriptions.md, in process: it sends each configured RPC type at a
// constant rate through one client channel, and answers what the document's LoadBalancerStatsService answers:
// the peer distribution of the next `numRpcs` RPCs *sent* after the request (a block of consecutive outgoing RPCs,
// whatever order they complete in), and the accumulated counts per method. XdsUpdateClientConfigureService's
// `Configure` is `configure()`.
import type { CallOutcome, InteropClient, RpcMethod } from "./client-adapter.js";

export interface ClientConfig {
  /** The RPC types sent on each tick. */
  readonly types: readonly RpcMethod[];
  /** Metadata attached to each RPC of a type. */
  readonly metadata?: Partial<Record<RpcMethod, readonly (readonly [string, string])[]>>;
  /** The deadline of every RPC. */
  readonly timeoutMs: number;
}

/** What GetClientStats answers for one block of RPCs. */
export interface BlockStats {
  /** Successful RPCs per peer. */
  readonly rpcsByPeer: Readonly<Record<string, number>>;
  /** Successful RPCs per method, per peer. */
  readonly rpcsByMethod: Readonly<Partial<Record<RpcMethod, Readonly<Record<string, number>>>>>;
  /** RPCs that failed (or succeeded without naming their peer). */
  readonly numFailures: number;
  /** The failures' status codes, for error messages. */
  readonly failureCodes: Readonly<Record<string, number>>;
  /** False when the timeout passed before every RPC of the block completed (partial results). */
  readonly complete: boolean;
}

/** What GetClientAccumulatedStats answers. */
export interface AccumulatedStats {
  readonly rpcsStarted: Readonly<Partial<Record<RpcMethod, number>>>;
  /** Completed RPCs per method, per status code. */
  readonly result: Readonly<Partial<Record<RpcMethod, Readonly<Record<number, number>>>>>;
  /** RPCs that failed after at least one succeeded: what `--fail_on_failed_rpcs` makes the client exit for. */
  readonly failuresAfterFirstSuccess: number;
}

export interface LoadClient {
  configure(config: ClientConfig): void;
  /** The peer distribution of the next `numRpcs` RPCs sent; partial if they have not completed by `timeoutMs`. */
  stats(numRpcs: number, timeoutMs: number): Promise<BlockStats>;
  accumulated(): AccumulatedStats;
  /** Stops sending and waits for the RPCs in flight to complete. */
  stop(): Promise<void>;
}

export interface LoadClientOptions {
  readonly client: InteropClient;
  /** RPCs of each configured type per second. */
  readonly qps: number;
  readonly config: ClientConfig;
  /**
   * At most this many RPCs in flight: a tick that would exceed it is skipped, not made up later. Without it (the
   * document's client), a machine too busy to answer `qps` piles RPCs up until they pass their deadline; with it,
   * the client sends what the machine can answer and every block still holds consecutive RPCs. Default: no limit.
   */
  readonly maxInFlight?: number;
}

/** Adds one to `counts[key]`. */
function bump(counts: Record<string | number, number>, key: string | number): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** The counts kept for `method`, created empty the first time. */
function countsOf<K extends string | number>(
  byMethod: Partial<Record<RpcMethod, Record<K, number>>>,
  method: RpcMethod,
): Record<K, number> {
  let counts = byMethod[method];
  if (!counts) {
    counts = {} as Record<K, number>;
    byMethod[method] = counts;
  }
  return counts;
}

/** A block being collected: claims RPCs as they are sent, counts them as they complete. */
class Block {
  readonly byPeer: Record<string, number> = {};
  readonly byMethod: Partial<Record<RpcMethod, Record<string, number>>> = {};
  readonly failureCodes: Record<string, number> = {};
  failures = 0;
  unclaimed: number;
  pending = 0;
  readonly done: Promise<void>;
  #finish!: () => void;

  constructor(numRpcs: number) {
    this.unclaimed = numRpcs;
    this.done = new Promise((resolve) => {
      this.#finish = resolve;
    });
    if (numRpcs === 0) this.#finish();
  }

  record(method: RpcMethod, outcome: CallOutcome): void {
    this.pending--;
    if (outcome.ok && outcome.peer !== undefined) {
      bump(this.byPeer, outcome.peer);
      bump(countsOf(this.byMethod, method), outcome.peer);
    } else {
      this.failures++;
      bump(this.failureCodes, outcome.ok ? "ok-without-peer" : String(outcome.code));
    }
    if (this.unclaimed === 0 && this.pending === 0) this.#finish();
  }

  snapshot(complete: boolean): BlockStats {
    const copy = (counts: Record<string, number>) => ({ ...counts });
    const byMethod: Partial<Record<RpcMethod, Record<string, number>>> = {};
    for (const [method, peers] of Object.entries(this.byMethod)) byMethod[method as RpcMethod] = copy(peers);
    return {
      rpcsByPeer: copy(this.byPeer),
      rpcsByMethod: byMethod,
      numFailures: this.failures,
      failureCodes: copy(this.failureCodes),
      complete,
    };
  }
}

export function startLoadClient(options: LoadClientOptions): LoadClient {
  const { client, qps } = options;
  let config = options.config;
  const blocks = new Set<Block>();
  const inFlight = new Set<Promise<void>>();
  const started: Partial<Record<RpcMethod, number>> = {};
  const result: Partial<Record<RpcMethod, Record<number, number>>> = {};
  let anySucceeded = false;
  let failuresAfterFirstSuccess = 0;
  let stopped = false;

  const send = (method: RpcMethod) => {
    // The blocks open now claim this RPC, in the order RPCs are sent.
    const claimed: Block[] = [];
    for (const block of blocks) {
      if (block.unclaimed === 0) continue;
      block.unclaimed--;
      block.pending++;
      claimed.push(block);
    }
    started[method] = (started[method] ?? 0) + 1;
    const call = client
      .call(method, { metadata: config.metadata?.[method] ?? [], timeoutMs: config.timeoutMs })
      .then((outcome) => {
        bump(countsOf(result, method), outcome.code);
        if (outcome.ok) anySucceeded = true;
        else if (anySucceeded) failuresAfterFirstSuccess++;
        for (const block of claimed) block.record(method, outcome);
      })
      .finally(() => inFlight.delete(call));
    inFlight.add(call);
  };

  // Ticks at `qps`; a late timer (a busy machine) sends the ticks it missed at once, so the rate holds on average,
  // unless that would exceed maxInFlight.
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY;
  const intervalMs = 1000 / qps;
  const startedAt = performance.now();
  let ticks = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    const due = Math.floor((performance.now() - startedAt) / intervalMs) + 1;
    for (; ticks < due && !stopped; ticks++) {
      if (inFlight.size + config.types.length > maxInFlight) {
        ticks = due;
        break;
      }
      for (const method of config.types) send(method);
    }
    if (!stopped) timer = setTimeout(tick, Math.max(0, ticks * intervalMs - (performance.now() - startedAt)));
  };
  tick();

  return {
    configure(next) {
      config = next;
    },
    async stats(numRpcs, timeoutMs) {
      const block = new Block(numRpcs);
      blocks.add(block);
      let timeout: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timeout = setTimeout(() => resolve(true), timeoutMs);
      });
      const late = await Promise.race([block.done.then(() => false), timedOut]);
      clearTimeout(timeout);
      blocks.delete(block);
      return block.snapshot(!late);
    },
    accumulated() {
      const copy: Partial<Record<RpcMethod, Record<number, number>>> = {};
      for (const [method, codes] of Object.entries(result)) copy[method as RpcMethod] = { ...codes };
      return { rpcsStarted: { ...started }, result: copy, failuresAfterFirstSuccess };
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}
