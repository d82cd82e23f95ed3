// A management server fed from an etcd prefix: everything read at one revision, then watched from the next one.
// Each watch response is applied as one change (served-keys.ts). After a disconnect the watch resumes from the
// revision served; after a compaction past it (or a store that went back in time), everything is read again and
// only what differs is applied, so nothing unchanged is pushed. While etcd is unreachable the server keeps serving
// the last revision. docs/architecture.md#replicas-over-etcd has the picture.
import type { Registry } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos";
import type { EtcdConnection } from "../etcd/etcd-connection.js";
import { EtcdError } from "../etcd/etcd-error.js";
import type { Event } from "../gen/mvccpb/kv_pb.js";
import { Event_EventType } from "../gen/mvccpb/kv_pb.js";
import { DEFAULT_PREFIX, normalizePrefix, prefixRange } from "../keys/resource-key.js";
import { type Logger, loggerOrEnvironment, prefixed } from "../logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../long-timer.js";
import { DEFAULT_PAGE_SIZE, readPrefix } from "./read-prefix.js";
import {
  type ApplyOutcome,
  createServedKeys,
  type EtcdSourceTarget,
  type KeyChange,
  type SkippedKey,
} from "./served-keys.js";

/**
 * - `connecting`: the first read has not succeeded yet (nothing is served from etcd).
 * - `watching`: the server holds the prefix as of `revision` and follows it.
 * - `disconnected`: etcd is unreachable (or refused the source); the server keeps serving `revision`.
 * - `closed`.
 */
export type EtcdSourceState = "connecting" | "watching" | "disconnected" | "closed";

export interface EtcdSourceStatus {
  readonly state: EtcdSourceState;
  /** The etcd revision the server holds (0 before the first read). */
  readonly revision: number;
  /** Why etcd could not be used (`connecting` after a failure, `disconnected`). */
  readonly error?: EtcdError;
}

/** What one applied etcd change did. */
export interface EtcdSourceChange extends ApplyOutcome {
  /** The revision the server now holds. */
  readonly revision: number;
  /** `load`: the first read; `watch`: watched events; `resync`: a full read after a compaction. */
  readonly cause: "load" | "watch" | "resync";
}

export interface EtcdSourceOptions {
  readonly etcd: EtcdConnection;
  /**
   * The server to feed (a `ManagementServer`). Create it with `contentVersions: true`, so that every replica gives
   * a resource the same version (docs/decisions.md#content-versions).
   */
  readonly server: EtcdSourceTarget;
  /** The key prefix. Default `/xds`. */
  readonly prefix?: string;
  /** Message types beyond `@xdskit/protos`. */
  readonly registry?: Registry;
  readonly logger?: Logger;
  /** Keys per read while loading. Default 500. */
  readonly pageSize?: number;
  /** Backoff while etcd is unreachable: first delay, doubling up to the largest. Defaults 250 ms and 5 s. */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  /**
   * How often a quiet watch asks etcd for its progress, and how long etcd has to answer before the watch counts as
   * lost (a peer gone without closing the connection). Defaults 10 s and 5 s.
   */
  readonly progressIntervalMs?: number;
  readonly progressTimeoutMs?: number;
  /** Called on every state change. */
  readonly onStatus?: (status: EtcdSourceStatus) => void;
  /** Called after every change applied to the server. */
  readonly onChange?: (change: EtcdSourceChange) => void;
}

export interface EtcdSource {
  /**
   * Resolves with the revision of the first read once it is applied. Rejects when etcd refuses the source for good
   * before that (wrong credentials, no permission, TLS) or when the source is closed first.
   */
  readonly ready: Promise<number>;
  readonly status: EtcdSourceStatus;
  /** Keys under the prefix, and those served. */
  readonly keys: number;
  readonly served: number;
  /** Keys whose value is not served as it stands in etcd, and why. */
  skipped(): SkippedKey[];
  /**
   * Resolves once the server holds `revision` or a later one: the first read was at it or later, or a watched change
   * at it or later was applied (for tests and tools; a revision that changed nothing under the prefix resolves with
   * the next change that does).
   */
  waitForRevision(revision: number): Promise<void>;
  close(): Promise<void>;
}

/** Refusals that trying again will not fix, at start: the source gives up on them rather than wait. */
const PERMANENT = new Set(["auth-failed", "auth-required", "permission-denied", "tls"]);

export function createEtcdSource(options: EtcdSourceOptions): EtcdSource {
  const etcd = options.etcd;
  const prefix = normalizePrefix(options.prefix ?? DEFAULT_PREFIX);
  const logger = prefixed(loggerOrEnvironment(options.logger), "[etcd-source]");
  const keys = createServedKeys({
    target: options.server,
    prefix,
    registry: options.registry ?? xdsRegistry,
    logger,
  });
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const retryInitialMs = options.retryInitialMs ?? 250;
  const retryMaxMs = options.retryMaxMs ?? 5_000;
  const progressIntervalMs = options.progressIntervalMs ?? 10_000;
  const progressTimeoutMs = options.progressTimeoutMs ?? 5_000;
  let status: EtcdSourceStatus = { state: "connecting", revision: 0 };
  /** Failed attempts in a row (the backoff's exponent); reset once etcd accepts a watch. */
  let attempt = 0;
  let closed = false;
  let loaded = false;
  /** The revision of the last full read. */
  let loadedAt = 0;
  let resyncNeeded = false;
  let stream: { close(): void } | undefined;
  let wake: (() => void) | undefined;
  let waiters: { revision: number; resolve: () => void }[] = [];
  let resolveReady!: (revision: number) => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<number>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => {});

  /** Runs a callback of the caller's; one that throws is logged and does not stop the source. */
  function notify<T>(callback: ((value: T) => void) | undefined, value: T, what: string): void {
    if (!callback) return;
    try {
      callback(value);
    } catch (error) {
      logger.error(`the ${what} callback threw; the source carries on`, error);
    }
  }

  function setStatus(next: EtcdSourceStatus): void {
    const changed = next.state !== status.state || next.error?.message !== status.error?.message;
    status = next;
    if (changed) notify(options.onStatus, status, "onStatus");
  }

  function served(revision: number, change?: Omit<EtcdSourceChange, "revision">): void {
    status = { ...status, revision };
    if (change) notify(options.onChange, { ...change, revision }, "onChange");
    const due = waiters.filter((w) => w.revision <= revision);
    waiters = waiters.filter((w) => w.revision > revision);
    for (const waiter of due) waiter.resolve();
  }

  /** Reads the whole prefix and applies what differs from what is served. */
  async function load(): Promise<void> {
    const snapshot = await readPrefix(etcd, prefix, pageSize);
    if (closed) return;
    const first = !loaded;
    const outcome = first ? keys.apply(snapshot.kvs) : keys.resync(snapshot.kvs);
    loaded = true;
    loadedAt = snapshot.revision;
    resyncNeeded = false;
    if (first) {
      logger.info(`loaded ${keys.served} resources (${keys.keys} keys) at revision ${snapshot.revision}`);
    } else {
      logger.info(
        `read everything again at revision ${snapshot.revision}: ${outcome.set} set, ${outcome.removed} removed`,
      );
    }
    served(snapshot.revision, { ...outcome, cause: first ? "load" : "resync" });
    setStatus({ state: "watching", revision: snapshot.revision });
    if (first) resolveReady(snapshot.revision);
  }

  function changesOf(events: readonly Event[]): KeyChange[] {
    return events.map((event) => ({
      key: Buffer.from(event.kv?.key ?? new Uint8Array()).toString("utf8"),
      value: event.type === Event_EventType.DELETE ? undefined : (event.kv?.value ?? new Uint8Array()),
      modRevision: Number(event.kv?.modRevision ?? 0n),
    }));
  }

  /**
   * Watches from the revision after the one served, until the stream ends (returns whether etcd had accepted the
   * watch) or fails (throws).
   */
  async function watch(): Promise<boolean> {
    const from = status.revision + 1;
    const opened = await etcd.openWatch();
    stream = opened;
    if (closed) {
      opened.close();
      return false;
    }
    const { key, rangeEnd } = prefixRange(prefix);
    opened.send({
      requestUnion: {
        case: "createRequest",
        value: { key, rangeEnd, startRevision: BigInt(from), progressNotify: true, fragment: true },
      },
    });
    let fragments: Event[] = [];
    let created = false;
    // Liveness: any response shows etcd is there; after a quiet interval, ask for progress and wait for an answer.
    let lost: EtcdError | undefined;
    let answered = true;
    let timer: LongTimer | undefined;
    const check = () => {
      if (!answered) {
        lost = new EtcdError("unavailable", 4, `etcd did not answer a progress request within ${progressTimeoutMs} ms`);
        opened.close();
        etcd.reset();
        return;
      }
      answered = false;
      opened.send({ requestUnion: { case: "progressRequest", value: {} } });
      timer = setLongTimeout(check, progressTimeoutMs);
    };
    const quiet = () => {
      answered = true;
      clearLongTimer(timer);
      timer = setLongTimeout(check, progressIntervalMs);
    };
    quiet();
    try {
      for await (const response of opened.responses) {
        quiet();
        if (closed) return created;
        if (response.canceled) {
          if (response.compactRevision > 0n) {
            logger.warn(
              `etcd compacted its history past revision ${status.revision} (to ${response.compactRevision}): reading everything again`,
            );
            resyncNeeded = true;
            return true;
          }
          throw new EtcdError("other", 0, `etcd cancelled the watch: ${response.cancelReason || "no reason given"}`);
        }
        const headerRevision = Number(response.header?.revision ?? 0n);
        if (response.created) {
          if (headerRevision < status.revision) {
            // A store behind what we serve (restored from a backup, or another cluster): nothing to resume from.
            logger.warn(
              `etcd is at revision ${headerRevision}, behind the ${status.revision} served: reading everything again`,
            );
            resyncNeeded = true;
            return true;
          }
          created = true;
          if (status.state !== "watching" || from === loadedAt + 1) {
            logger.info(`watching ${prefix}/ from revision ${from} on ${etcd.endpoint}`);
          }
          setStatus({ state: "watching", revision: status.revision });
          attempt = 0;
          continue;
        }
        if (response.fragment) {
          fragments.push(...response.events);
          continue;
        }
        const events = fragments.length > 0 ? [...fragments, ...response.events] : response.events;
        fragments = [];
        // A progress response (no events) only shows etcd is there: its revision does not move the resume point.
        // etcd releases of early 2023 and before could send a requested progress ahead of events not yet sent on the
        // stream, and resuming from it would skip them; only applied events move it.
        if (events.length === 0) continue;
        const outcome = keys.apply(changesOf(events));
        served(Number(events.at(-1)?.kv?.modRevision ?? BigInt(status.revision)), { ...outcome, cause: "watch" });
      }
      if (lost) throw lost;
      return created;
    } catch (error) {
      throw lost ?? error;
    } finally {
      clearLongTimer(timer);
      opened.close();
      if (stream === opened) stream = undefined;
    }
  }

  function delay(): Promise<void> {
    const ms = Math.min(retryMaxMs, retryInitialMs * 2 ** Math.min(attempt, 16));
    attempt++;
    return new Promise((resolve) => {
      const timer = setLongTimeout(resolve, ms * (0.8 + Math.random() * 0.4));
      wake = () => {
        clearLongTimer(timer);
        resolve();
      };
    });
  }

  async function run(): Promise<void> {
    while (!closed) {
      try {
        if (!loaded || resyncNeeded) await load();
        if (closed) break;
        const accepted = await watch();
        // A stream etcd ended before accepting the watch is a failure too: wait before the next one.
        if (!accepted && !resyncNeeded && !closed) await delay();
      } catch (raw) {
        if (closed) break;
        const error = EtcdError.from(raw, etcd.endpoint);
        if (!loaded && PERMANENT.has(error.kind)) {
          // ready rejects with it: the program says so (logged here for programs that only log).
          logger.info(`etcd refused the source: ${error.message}`);
          setStatus({ state: "closed", revision: 0, error });
          closed = true;
          rejectReady(error);
          break;
        }
        if (error.kind === "compacted") resyncNeeded = true;
        // State changes are info: onStatus is how a program tells its users (the CLI prints them).
        if (loaded && status.state !== "disconnected") {
          logger.info(`etcd unavailable (${error.message}); serving revision ${status.revision} until it is back`);
        } else if (!loaded && status.error?.message !== error.message) {
          logger.info(`waiting for etcd: ${error.message}`);
        }
        setStatus({ state: loaded ? "disconnected" : "connecting", revision: status.revision, error });
        await delay();
      }
    }
  }

  const running = run();

  return {
    ready,
    get status() {
      return status;
    },
    get keys() {
      return keys.keys;
    },
    get served() {
      return keys.served;
    },
    skipped: () => keys.skipped(),
    waitForRevision(revision) {
      if (status.revision >= revision) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ revision, resolve }));
    },
    async close() {
      if (status.state === "closed" && closed) {
        await running;
        return;
      }
      closed = true;
      stream?.close();
      wake?.();
      await running;
      if (!loaded) rejectReady(new Error("the etcd source was closed before its first read"));
      setStatus({ state: "closed", revision: status.revision });
    },
  };
}
