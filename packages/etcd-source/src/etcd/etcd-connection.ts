// A small etcd v3 client over Connect's gRPC transport (HTTP/2): the KV, Watch and Auth calls etcd-source needs.
// One endpoint is used at a time; a call that could not reach it moves to the next (reads are retried there, writes
// are not: a write whose outcome is unknown is the caller's to check). With a user, the token etcd issues is sent as
// the `token` metadata of every call and renewed when etcd says it expired.
import { readFileSync } from "node:fs";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  Auth,
  type DeleteRangeRequestSchema,
  KV,
  type RangeRequestSchema,
  type TxnRequestSchema,
  type TxnResponse,
  Watch,
  type WatchRequestSchema,
  type WatchResponse,
} from "../gen/etcdserverpb/rpc_pb.js";
import type { KeyValue } from "../gen/mvccpb/kv_pb.js";
import type { Logger } from "../logger.js";
import { loggerOrEnvironment, prefixed } from "../logger.js";
import { MAX_TIMER_DELAY_MS } from "../long-timer.js";
import { type EtcdEndpoint, parseEndpoints } from "./endpoints.js";
import { EtcdError } from "./etcd-error.js";

export interface EtcdTlsOptions {
  /** PEM file of the CA that signed etcd's certificate (etcdctl `--cacert`); without it, the system roots. */
  readonly caFile?: string;
  /** PEM files of a client certificate and its key, for etcd's `--client-cert-auth` (etcdctl `--cert`, `--key`). */
  readonly certFile?: string;
  readonly keyFile?: string;
}

export interface EtcdConnectionOptions {
  /** etcd's client URLs: `host:port`, `http://host:port` or `https://host:port` (etcdctl `--endpoints`). */
  readonly endpoints: readonly string[];
  /** TLS to etcd; a bare `host:port` endpoint is then https. */
  readonly tls?: EtcdTlsOptions;
  /** A user of etcd's authentication (etcdctl `--user`). */
  readonly auth?: { readonly user: string; readonly password: string };
  /** The deadline of each unary call. Default 10 s. */
  readonly requestTimeoutMs?: number;
  readonly logger?: Logger;
}

/** A read: the keys and the store's revision they were read at. */
export interface RangeResult {
  readonly revision: number;
  readonly kvs: readonly KeyValue[];
  /** More keys are in the range past `limit`. */
  readonly more: boolean;
  readonly count: number;
}

export interface WatchStreamHandle {
  /** Sends a request on the stream (create, cancel, progress). */
  send(request: MessageInitShape<typeof WatchRequestSchema>): void;
  /** The stream's responses; throws when the stream fails. */
  readonly responses: AsyncIterable<WatchResponse>;
  /** Ends the stream. */
  close(): void;
}

/** A connection to an etcd cluster. */
export interface EtcdConnection {
  /** The endpoint in use. */
  readonly endpoint: string;
  range(request: MessageInitShape<typeof RangeRequestSchema>): Promise<RangeResult>;
  put(key: Uint8Array, value: Uint8Array): Promise<number>;
  deleteRange(request: MessageInitShape<typeof DeleteRangeRequestSchema>): Promise<number>;
  txn(request: MessageInitShape<typeof TxnRequestSchema>): Promise<TxnResponse>;
  /** Drops the history before `revision` (waits until the backend applied it). */
  compact(revision: number): Promise<void>;
  /** Opens a watch stream on the endpoint in use. */
  openWatch(): Promise<WatchStreamHandle>;
  /** For tests and set-up: etcd's Auth service (adding users, enabling authentication). */
  readonly auth: Client<typeof Auth>;
  /** Drops the connection to the endpoint in use (it stopped answering): the next call dials again. */
  reset(): void;
  close(): void;
}

interface EndpointClients {
  readonly endpoint: EtcdEndpoint;
  readonly kv: Client<typeof KV>;
  readonly watch: Client<typeof Watch>;
  readonly auth: Client<typeof Auth>;
  readonly abort: AbortController;
  readonly sessions: Http2SessionManager;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** A page of a load holds at most 500 keys, each under etcd's request limit (1.5 MiB by default). */
const READ_MAX_BYTES = 1 << 30;

function readPem(file: string | undefined, option: string): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new TypeError(`etcd TLS ${option} ${file}: ${(error as Error).message}`);
  }
}

export function connectEtcd(options: EtcdConnectionOptions): EtcdConnection {
  const tlsOptions = options.tls;
  const useTls = tlsOptions !== undefined && Object.values(tlsOptions).some((v) => v !== undefined);
  const endpoints = parseEndpoints(options.endpoints, useTls);
  if ((tlsOptions?.certFile === undefined) !== (tlsOptions?.keyFile === undefined)) {
    throw new TypeError("etcd TLS: a client certificate (cert) and its key go together");
  }
  const ca = readPem(tlsOptions?.caFile, "cacert");
  const cert = readPem(tlsOptions?.certFile, "cert");
  const key = readPem(tlsOptions?.keyFile, "key");
  // From the environment: prefixed as the source's lines are (an explicit logger is used as given).
  const logger = options.logger ?? prefixed(loggerOrEnvironment(undefined), "[etcd-source]");
  // Connect arms one Node timer per call: past its limit it would fire at once (docs/decisions.md#long-timers).
  const timeoutMs = Math.min(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, MAX_TIMER_DELAY_MS);
  const auth = options.auth;
  let token: string | undefined;
  let authenticating: Promise<string> | undefined;
  let current = 0;
  let closed = false;
  const clients = new Map<number, EndpointClients>();

  const tokenInterceptor: Interceptor = (next) => async (request) => {
    if (token !== undefined) request.header.set("token", token);
    return next(request);
  };

  function clientsFor(index: number): EndpointClients {
    let found = clients.get(index);
    if (found) return found;
    const endpoint = endpoints[index]!;
    // No HTTP/2 pings: a watch checks that etcd answers by itself (etcd-source.ts), and connect-node 2.1's ping timer
    // can outlive a session that received GOAWAY, then throws from a timer when it pings the destroyed session.
    const sessions = new Http2SessionManager(
      endpoint.url,
      {},
      endpoint.tls ? { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) } : {},
    );
    const transport = createGrpcTransport({
      baseUrl: endpoint.url,
      sessionManager: sessions,
      readMaxBytes: READ_MAX_BYTES,
      interceptors: [tokenInterceptor],
    });
    found = {
      endpoint,
      kv: createClient(KV, transport),
      watch: createClient(Watch, transport),
      auth: createClient(Auth, transport),
      abort: new AbortController(),
      sessions,
    };
    clients.set(index, found);
    return found;
  }

  function callOptions(): CallOptions {
    return { timeoutMs, signal: clientsFor(current).abort.signal };
  }

  async function authenticate(): Promise<string> {
    if (auth === undefined) throw new EtcdError("auth-required", 16, "etcd: no user to authenticate with");
    authenticating ??= clientsFor(current)
      .auth.authenticate({ name: auth.user, password: auth.password }, { timeoutMs })
      .then(
        (response) => {
          token = response.token;
          return response.token;
        },
        (error: unknown) => {
          throw EtcdError.from(error, endpoints[current]!.url);
        },
      )
      .finally(() => {
        authenticating = undefined;
      });
    return authenticating;
  }

  /** The endpoint failed: the next call uses the next one. */
  function moveOn(failed: number): void {
    if (failed !== current || endpoints.length === 1) return;
    current = (current + 1) % endpoints.length;
    logger.info(`etcd endpoint ${endpoints[failed]!.url} unreachable; trying ${endpoints[current]!.url}`);
  }

  /**
   * Runs `call` on the endpoint in use, authenticating first when a user is set, and once more when etcd says the
   * token expired; a transient failure moves to the next endpoint, and is retried there when `retry` holds.
   */
  async function run<T>(call: (c: EndpointClients) => Promise<T>, retry: boolean): Promise<T> {
    if (closed) throw new EtcdError("unavailable", 1, "etcd: the connection is closed");
    let attempts = retry ? endpoints.length : 1;
    let renewed = false;
    for (;;) {
      const index = current;
      try {
        if (auth !== undefined && token === undefined) await authenticate();
        return await call(clientsFor(index));
      } catch (raw) {
        const error = EtcdError.from(raw, endpoints[index]!.url);
        if (error.kind === "auth-required" && auth !== undefined && !renewed) {
          // The token expired (etcd's --auth-token-ttl) or etcd restarted: a new one, once.
          renewed = true;
          token = undefined;
          continue;
        }
        if (!error.transient) throw error;
        moveOn(index);
        if (--attempts <= 0) throw error;
      }
    }
  }

  const connection: EtcdConnection = {
    get endpoint() {
      return endpoints[current]!.url;
    },
    async range(request) {
      const response = await run((c) => c.kv.range(request, callOptions()), true);
      return {
        revision: Number(response.header?.revision ?? 0n),
        kvs: response.kvs,
        more: response.more,
        count: Number(response.count),
      };
    },
    async put(key, value) {
      const response = await run((c) => c.kv.put({ key, value }, callOptions()), false);
      return Number(response.header?.revision ?? 0n);
    },
    async deleteRange(request) {
      const response = await run((c) => c.kv.deleteRange(request, callOptions()), false);
      return Number(response.header?.revision ?? 0n);
    },
    txn: (request) => run((c) => c.kv.txn(request, callOptions()), false),
    async compact(revision) {
      await run((c) => c.kv.compact({ revision: BigInt(revision), physical: true }, callOptions()), true);
    },
    async openWatch() {
      return run(async (c) => {
        const requests = createWritableIterable<MessageInitShape<typeof WatchRequestSchema>>();
        const abort = new AbortController();
        const onClose = () => abort.abort();
        c.abort.signal.addEventListener("abort", onClose, { once: true });
        const responses = c.watch.watch(requests, { signal: abort.signal });
        return {
          send: (request) => {
            requests.write(request).catch(() => {});
          },
          responses,
          close: () => {
            c.abort.signal.removeEventListener("abort", onClose);
            requests.close();
            abort.abort();
          },
        };
      }, true);
    },
    get auth() {
      return clientsFor(current).auth;
    },
    reset() {
      clients.get(current)?.sessions.abort();
    },
    close() {
      closed = true;
      for (const c of clients.values()) {
        c.abort.abort();
        c.sessions.abort();
      }
      clients.clear();
    },
  };
  return connection;
}

export { EtcdError };
