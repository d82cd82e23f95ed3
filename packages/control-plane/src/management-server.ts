import type * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, createRegistry } from "@bufbuild/protobuf";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { xdsRegistry } from "@xdskit/protos";
import { type ControlPlane, ControlPlaneSchema, type Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { DynamicParameterConstraintsMap } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import { LoadReportingService } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import type { ChangedVariants } from "./held/change-scope.js";
import { createPlanCache, type PlanCache } from "./held/response-plan.js";
import { WakeIndex } from "./held/wake-index.js";
import type { StreamKind } from "./hooks/hook-events.js";
import { type BreakOptions, HooksImpl } from "./hooks/hooks.js";
import { resolveLimits, type ServerLimits } from "./limits.js";
import { loggerFromEnvironment } from "./log-environment.js";
import { noopLogger, prefixLogger, type ScopedLogger } from "./logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";
import { serveLrsCall } from "./lrs/lrs-call.js";
import { LrsSinkImpl } from "./lrs/lrs-sink.js";
import type { DynamicParametersOptions, ManagementServer, ManagementServerOptions } from "./management-server-api.js";
import {
  buildDynamicParameterConstraintsMap,
  DEFAULT_DYNAMIC_PARAMETERS_NAME,
  type DynamicParametersInit,
} from "./resources/dynamic-parameters.js";
import type { ResourceInput, ResourceMessage, ResourceOptions } from "./resources/resource-input.js";
import type { ResourceErrorOptions } from "./resources/resource-set.js";
import { type NodeScope, type NodeSelector, ResourceStore } from "./resources/resource-store.js";
import type { ResourceSource, ServedResolver, ServedResources } from "./resources/served.js";
import type { ConstraintsInput } from "./resources/variant-group.js";
import { createStreamAdmission } from "./security/authorization.js";
import {
  createReadPolicy,
  type ReadAccess,
  type ReadPolicy,
  type StreamIdentity,
} from "./security/authorization-read.js";
import { clientStatusAccess, clientStatusPolicy } from "./security/client-status-access.js";
import type { PeerIdentity } from "./security/identity.js";
import { createPeerLookup, type PeerLookup, refuseUnverifiedPeers } from "./security/identity-peers.js";
import { createTlsCredentials, type TlsCredentials } from "./security/tls-credentials.js";
import { createHttp2Listener, onListening } from "./security/tls-server.js";
import type { StatusInit } from "./status.js";
import { DeltaStream } from "./streams/delta-stream.js";
import { createFlushBatch, type FlushBatch } from "./streams/flush-batch.js";
import { openGrpcCall, refuseCall } from "./streams/grpc-call.js";
import { SotwStream } from "./streams/sotw-stream.js";
import type { AdsStream, StreamHost } from "./streams/stream-base.js";
import type { StreamInfo } from "./streams/stream-info.js";
import type { TypeSubscription } from "./streams/subscription.js";
import { CDS_TYPE_URL, DEFAULT_FULL_STATE_TYPE_URLS } from "./type-urls.js";

const SOTW_PATH = `/${AggregatedDiscoveryService.typeName}/${AggregatedDiscoveryService.method.streamAggregatedResources.name}`;
const DELTA_PATH = `/${AggregatedDiscoveryService.typeName}/${AggregatedDiscoveryService.method.deltaAggregatedResources.name}`;
const LRS_PATH = `/${LoadReportingService.typeName}/${LoadReportingService.method.streamLoadStats.name}`;

/** Starts a management server; resolves once it listens. */
export async function createManagementServer(options: ManagementServerOptions = {}): Promise<ManagementServer> {
  const server = new ManagementServerImpl(options, undefined);
  if (options.listen !== false) await server.start();
  return server;
}

/**
 * A server whose streams are served from `source` instead of its own resource sets (whose methods then serve
 * nobody). Internal: for `@xdskit/xds-relay`.
 */
export async function createManagementServerWithSource(
  options: ManagementServerOptions,
  source: ResourceSource,
): Promise<ManagementServer> {
  const server = new ManagementServerImpl(options, source);
  await server.start();
  return server;
}

class ManagementServerImpl implements ManagementServer, StreamHost {
  readonly host: string;
  readonly hooks: HooksImpl;
  readonly logger: ScopedLogger;
  readonly store: ResourceStore;
  readonly resolver: ServedResolver;
  readonly #source: ResourceSource | undefined;
  readonly fullStateTypeUrls: ReadonlySet<string>;
  readonly wrapResources: boolean;
  readonly controlPlane: ControlPlane | undefined;
  readonly lrs: LrsSinkImpl;
  readonly limits: ServerLimits;
  readonly plans: Readonly<Record<StreamKind, PlanCache>> = { sotw: createPlanCache(), delta: createPlanCache() };
  readonly flushes: FlushBatch;
  readonly #options: ManagementServerOptions;
  readonly #streams = new Set<AdsStream>();
  /** The streams by what they subscribe to, for changes to find the streams they may concern. */
  readonly #wake = new WakeIndex<AdsStream>();
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  readonly #peers: PeerLookup = createPeerLookup();
  readonly #tls: TlsCredentials | undefined;
  readonly #admit: (peer: PeerIdentity, node: Node | undefined) => void;
  readonly #readPolicy: ReadPolicy | undefined;
  /** The peer of each LRS stream, by the node of its first request (the object the LRS sink keeps). */
  readonly #lrsPeers = new WeakMap<Node, PeerIdentity>();
  #warnedCleartext = false;
  /** Services other than ADS (served by connect-node). */
  readonly #connectHandler: ReturnType<typeof connectNodeAdapter>;
  #server: http2.Http2Server | http2.Http2SecureServer | undefined;
  #port: number;
  #closed = false;
  #nextStreamId = 0;
  #transition: Promise<void> = Promise.resolve();

  constructor(options: ManagementServerOptions, source: ResourceSource | undefined) {
    this.#options = options;
    this.#source = source;
    this.host = options.host ?? "127.0.0.1";
    this.#port = options.port ?? 0;
    if (!Number.isInteger(this.#port) || this.#port < 0 || this.#port > 65535) {
      throw new RangeError(`port must be an integer in 0-65535, got ${String(options.port)}`);
    }
    this.limits = resolveLimits(options);
    this.logger = prefixLogger(
      options.logger ?? loggerFromEnvironment("control-plane") ?? noopLogger,
      "[control-plane]",
    );
    this.flushes = createFlushBatch((error) => this.logger.error("internal error flushing a stream", error));
    this.#tls = options.tls ? createTlsCredentials(options.tls, this.logger) : undefined;
    if (options.identity && !this.#tls?.mutual) {
      throw new TypeError("identity binds nodes to client certificates: it needs tls with a CA (ca or caFile)");
    }
    this.#admit = createStreamAdmission({ identity: options.identity, authorize: options.authorize });
    this.#readPolicy = options.canRead ? createReadPolicy(options.canRead, options.authorizationClass) : undefined;
    const historyLimit = options.historyLimit ?? 1000;
    if (!(historyLimit >= 0)) throw new RangeError("historyLimit must be >= 0");
    this.hooks = new HooksImpl(this.logger, historyLimit);
    this.hooks.attach({
      breakStreams: (o) => this.#breakStreams(o),
      abortConnections: () => this.#abortConnections(),
      releaseHeld: () => {
        for (const stream of [...this.#streams]) stream.releaseHeld();
      },
      injectResponse: (streamId, response) => {
        const stream = [...this.#streams].find((s) => s.id === streamId);
        if (!stream) throw new Error(`injectResponse: no open stream ${streamId}`);
        return stream.inject(response);
      },
    });
    this.lrs = new LrsSinkImpl({
      logger: this.logger,
      historyLimit,
      clusterNamesFor: (node) => this.#readableClusters(node),
    });
    if (options.lrsPolicy !== undefined) this.lrs.setPolicy(options.lrsPolicy);
    const registry = options.typeRegistry ? createRegistry(xdsRegistry, options.typeRegistry) : xdsRegistry;
    this.store = new ResourceStore({
      registry,
      logger: this.logger,
      allowOverlappingVariants: options.allowOverlappingVariants ?? false,
      contentVersions: options.contentVersions ?? false,
      onChange: (set, changed) => this.#onSetChanged(set, changed),
      onScopesChanged: () => {
        for (const stream of [...this.#streams]) stream.rebind();
      },
    });
    this.resolver = source ? sourceResolver(source) : this.store;
    source?.attach((changed) => this.#onSourceChanged(changed));
    this.fullStateTypeUrls = new Set(options.fullStateTypeUrls ?? DEFAULT_FULL_STATE_TYPE_URLS);
    this.wrapResources = options.wrapResources ?? false;
    this.controlPlane =
      options.controlPlaneId !== undefined
        ? create(ControlPlaneSchema, { identifier: options.controlPlaneId })
        : undefined;
    const csdsPolicy = clientStatusPolicy(options);
    this.#connectHandler = connectNodeAdapter({
      routes: (router) => this.#routes(router),
      grpc: true,
      connect: false,
      grpcWeb: false,
      readMaxBytes: this.limits.maxRequestBytes,
      interceptors: [refuseUnverifiedPeers, ...(csdsPolicy ? [clientStatusAccess(csdsPolicy)] : [])],
      contextValues: (req) => this.#peers.contextValues(req),
    });
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `${this.#tls ? "https" : "http"}://${this.address}`;
  }

  get address(): string {
    return `${this.host.includes(":") ? `[${this.host}]` : this.host}:${this.#port}`;
  }

  get listening(): boolean {
    return this.#server !== undefined;
  }

  // --- the default resource set -------------------------------------------------------------------------------

  setResource(resource: ResourceMessage, options?: ResourceOptions): string {
    return this.store.defaultSet.setResource(resource, options);
  }
  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void {
    this.store.defaultSet.setResources(resources);
  }
  removeResource(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    return this.store.defaultSet.removeResource(typeUrl, name, constraints);
  }
  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void {
    this.store.defaultSet.setSnapshot(resources);
  }
  getResource(typeUrl: string, name: string, constraints?: ConstraintsInput): ResourceMessage | undefined {
    return this.store.defaultSet.getResource(typeUrl, name, constraints);
  }
  resourceNames(typeUrl: string): string[] {
    return this.store.defaultSet.resourceNames(typeUrl);
  }
  resourceVariants(typeUrl: string, name: string): string[] {
    return this.store.defaultSet.resourceVariants(typeUrl, name);
  }
  typeVersion(typeUrl: string): string {
    return this.store.defaultSet.typeVersion(typeUrl);
  }
  setResourceError(typeUrl: string, name: string, status: StatusInit | Status, options?: ResourceErrorOptions): void {
    this.store.defaultSet.setResourceError(typeUrl, name, status, options);
  }
  clearResourceError(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    return this.store.defaultSet.clearResourceError(typeUrl, name, constraints);
  }
  clear(): void {
    this.store.defaultSet.clear();
  }

  forNode(selector: NodeSelector): NodeScope {
    return this.store.addScope(selector);
  }

  setDynamicParameters(
    selector: NodeSelector,
    parameters: DynamicParametersInit | DynamicParameterConstraintsMap,
    options: DynamicParametersOptions = {},
  ): void {
    const resource =
      "$typeName" in parameters
        ? (parameters as DynamicParameterConstraintsMap)
        : buildDynamicParameterConstraintsMap(parameters);
    const name = options.name ?? DEFAULT_DYNAMIC_PARAMETERS_NAME;
    // Built before the set, so bad parameters leave everything as it was.
    this.store.dynamicParametersSet(selector).setSnapshot([{ resource, name }]);
  }

  clearDynamicParameters(selector: NodeSelector): boolean {
    return this.store.removeDynamicParametersSet(selector);
  }

  streams(): StreamInfo[] {
    return [...this.#streams].map((stream) => stream.info());
  }

  // --- StreamHost ----------------------------------------------------------------------------------------------

  register(stream: AdsStream): void {
    this.#streams.add(stream);
  }

  unregister(stream: AdsStream): void {
    this.#streams.delete(stream);
    this.#wake.forget(stream);
    this.#source?.closed(stream);
  }

  subscribed(stream: AdsStream, sub: TypeSubscription): void {
    this.#source?.subscribed(stream, sub);
    this.#wake.update(stream, sub);
  }

  admit(peer: PeerIdentity, node: Node | undefined): void {
    this.#admit(peer, node);
  }

  readAccess(identity: StreamIdentity): ReadAccess | undefined {
    return this.#readPolicy?.accessFor(identity);
  }

  authorizationChanged(): void {
    if (!this.#readPolicy) return;
    this.#readPolicy.changed();
    for (const stream of [...this.#streams]) stream.markAllDirty();
  }

  // --- lifecycle -----------------------------------------------------------------------------------------------

  start(): Promise<void> {
    return this.#serialize(() => this.#start());
  }

  stop(): Promise<void> {
    return this.#serialize(() => this.#stop());
  }

  restart(): Promise<void> {
    return this.#serialize(async () => {
      await this.#stop();
      await this.#start();
    });
  }

  close(): Promise<void> {
    return this.#serialize(async () => {
      this.#closed = true;
      await this.#stop();
      this.hooks.cancelWaits("server closed");
      this.lrs.cancelWaits("server closed");
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  reloadTls(): Promise<boolean> {
    return this.#serialize(async () => {}).then(() => this.#tls?.reload() ?? false);
  }

  #serialize(step: () => Promise<void>): Promise<void> {
    const next = this.#transition.then(step);
    this.#transition = next.catch(() => {});
    return next;
  }

  async #start(): Promise<void> {
    if (this.#closed) throw new Error("the management server is closed");
    if (this.#server) return;
    const server = createHttp2Listener(this.#tls, (req, res) => this.#serve(req, res), this.logger);
    server.on("session", (session) => {
      this.#sessions.add(session);
      session.on("error", (error) => this.logger.debug("HTTP/2 session error", error));
      session.once("close", () => this.#sessions.delete(session));
    });
    server.on("error", (error) => this.logger.error("HTTP/2 server error", error));
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      server.once("error", onError);
      server.listen(this.#port, this.host, () => {
        server.off("error", onError);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
    this.#warnedCleartext = onListening(server, this.#tls, this, this.logger, this.#warnedCleartext);
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    this.#tls?.unwatch();
    for (const stream of [...this.#streams]) {
      stream.end(Code.Unavailable, "server-stopped", "the management server is stopping");
    }
    this.lrs.endStreams(Code.Unavailable, "the management server is stopping");
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    const sessions = [...this.#sessions];
    const sessionsClosed = Promise.all(
      sessions.map((session) =>
        session.closed || session.destroyed
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              session.once("close", () => resolve());
              session.close();
            }),
      ),
    );
    let timer: LongTimer | undefined;
    const grace = new Promise<void>((resolve) => {
      // From the options: any length (docs/decisions.md#long-timers).
      timer = setLongTimeout(resolve, this.#options.shutdownGraceMs ?? 250);
    });
    await Promise.race([sessionsClosed, grace]);
    clearLongTimer(timer);
    for (const session of sessions) if (!session.destroyed) session.destroy();
    await serverClosed;
    this.logger.info(`stopped listening on ${this.address}`);
  }

  // --- hooks ---------------------------------------------------------------------------------------------------

  #breakStreams(options: BreakOptions): number {
    let count = 0;
    for (const stream of [...this.#streams]) {
      if (options.streamId !== undefined && stream.id !== options.streamId) continue;
      stream.end(options.code ?? Code.Unavailable, "broken", options.message ?? "stream broken by a test hook");
      count++;
    }
    return count;
  }

  #abortConnections(): number {
    for (const stream of [...this.#streams]) stream.end(undefined, "connection-aborted", "connection aborted");
    const sessions = [...this.#sessions];
    for (const session of sessions) session.destroy();
    return sessions.length;
  }

  // --- serving -------------------------------------------------------------------------------------------------

  #onSetChanged(set: ServedResources, changed: ChangedVariants): void {
    for (const stream of this.#wake.candidates(changed) ?? this.#streams) {
      if (stream.uses(set)) stream.markDirty(changed.keys(), changed);
    }
  }

  /** Every stream is served from the source, in one view or another: a change may concern any of them. */
  #onSourceChanged(changed: ChangedVariants): void {
    for (const stream of this.#wake.candidates(changed) ?? this.#streams) stream.markDirty(changed.keys(), changed);
  }

  /**
   * The ADS methods are served by the streams over raw gRPC (grpc-call.ts), so that one encoded response can be
   * written to many streams and each stream sees its own write queue; LRS over the same calls, so its requests are
   * read and refused as ADS requests are; other services go through connect-node.
   */
  #serve(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void {
    const path = req.headers[":path"];
    if (path === LRS_PATH) {
      this.#serveLrs(req, res);
      return;
    }
    if (path !== SOTW_PATH && path !== DELTA_PATH) {
      this.#connectHandler(req, res);
      return;
    }
    if (path === DELTA_PATH && this.#options.delta === false) {
      refuseCall(res, Code.Unimplemented, "delta xDS is not enabled on this server");
      return;
    }
    const call = openGrpcCall(req, res, { maxRequestBytes: this.limits.maxRequestBytes, logger: this.logger });
    if (!call) return;
    const id = ++this.#nextStreamId;
    const logger = this.#streamLogger(id);
    const peer = this.#peers.peerOf(req);
    const stream =
      path === SOTW_PATH
        ? new SotwStream(this, id, "sotw", call, logger, peer)
        : new DeltaStream(this, id, "delta", call, logger, peer);
    stream.serve();
  }

  #serveLrs(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void {
    const call = openGrpcCall(req, res, { maxRequestBytes: this.limits.maxRequestBytes, logger: this.logger });
    if (!call) return;
    const source = this.#source;
    serveLrsCall(call, this.#peers.peerOf(req), {
      sink: source?.serveLrs
        ? { serve: (requests, signal, peer) => source.serveLrs!(requests, signal, peer) }
        : this.lrs,
      limits: this.limits,
      logger: this.logger.child("[lrs]"),
      admit: this.#admit,
      admitted: (node, peer) => {
        if (node) this.#lrsPeers.set(node, peer);
      },
    });
  }

  /** Connect-node routes: services hosted beside ADS and LRS. */
  #routes(router: ConnectRouter): void {
    this.#options.routes?.(router);
  }

  /** The clusters the LRS sink names to a node's client: those of its set that it may read. */
  #readableClusters(node: Node | undefined): string[] {
    const names = this.store.resolve(node).resourceNames(CDS_TYPE_URL);
    const peer = node && this.#lrsPeers.get(node);
    if (!this.#readPolicy || !peer) return names;
    const access = this.#readPolicy.accessFor({ peer, node });
    return names.filter((name) => access.canRead(CDS_TYPE_URL, name));
  }

  #streamLogger(id: number): ScopedLogger {
    return this.logger.child(`[ads #${id}]`);
  }
}

/** Every node is served from the source (the view it gives the node, if any), and no DPDS set wins over it. */
function sourceResolver(source: ResourceSource): ServedResolver {
  const resources = source.resources;
  const resolve = source.resolve ? (node: Node | undefined) => source.resolve?.(node) ?? resources : () => resources;
  return { defaultSet: resources, resolve, resolveDynamicParameters: () => undefined };
}
