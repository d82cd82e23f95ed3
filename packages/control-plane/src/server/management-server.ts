import { create, createRegistry } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { xdsRegistry } from "@xdskit/protos";
import { type ControlPlane, ControlPlaneSchema, type Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { createPlanCache, type PlanCache } from "../held/response-plan.js";
import type { StreamKind } from "../hooks/hook-events.js";
import { HooksImpl } from "../hooks/hooks.js";
import { resolveLimits, type ServerLimits } from "../limits.js";
import { loggerFromEnvironment } from "../log-environment.js";
import { noopLogger, prefixLogger, type ScopedLogger } from "../logger.js";
import { LrsSinkImpl } from "../lrs/lrs-sink.js";
import { ResourceStore } from "../resources/resource-store.js";
import type { ResourceSource, ServedResolver } from "../resources/served.js";
import type { ReadAccess, StreamIdentity } from "../security/authorization-read.js";
import type { PeerIdentity } from "../security/identity.js";
import { createTlsCredentials } from "../security/tls-credentials.js";
import { createFlushBatch, type FlushBatch } from "../streams/flush-batch.js";
import type { AdsStream, StreamHost } from "../streams/stream-base.js";
import type { StreamInfo } from "../streams/stream-info.js";
import type { TypeSubscription } from "../subscriptions/subscription.js";
import { CDS_TYPE_URL, DEFAULT_FULL_STATE_TYPE_URLS } from "../type-urls.js";
import type { ManagementServer, ManagementServerOptions } from "./management-server-api.js";
import { createRequestRouter, type ServeRequest } from "./request-router.js";
import { ResourceFacade } from "./resource-facade.js";
import { checkPort, createServerLifecycle, type ServerLifecycle } from "./server-lifecycle.js";
import { createStreamAuthorization, type StreamAuthorization } from "./stream-authorization.js";
import { createStreamRegistry, type StreamRegistry } from "./stream-registry.js";
import { warmUp } from "./warm-up.js";
import type { WarmUpReport } from "./warm-up-report.js";

/** The warm-up of each protocol in this process (warm-up.ts), started by the first stream of the protocol. */
const warmUps = new Map<StreamKind, Promise<WarmUpReport>>();

/** Whether this process has started the warm-up of `kind` (for tests). */
export function warmUpStarted(kind: StreamKind): boolean {
  return warmUps.has(kind);
}

/**
 * Runs the change paths of `kind` once in this process, on a private server with no listener (warm-up.ts); later
 * calls return the first one's report. Exported for the tests that check it ran to its end and left nothing behind.
 */
export function warmUpOnce(kind: StreamKind): Promise<WarmUpReport> {
  let report = warmUps.get(kind);
  if (!report) {
    const server = new ManagementServerImpl({ listen: false, historyLimit: 0, logger: noopLogger }, undefined);
    report = warmUp(server, kind);
    warmUps.set(kind, report);
  }
  return report;
}

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

class ManagementServerImpl extends ResourceFacade implements ManagementServer, StreamHost {
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
  readonly #streams: StreamRegistry = createStreamRegistry();
  readonly #access: StreamAuthorization;
  readonly #serve: ServeRequest;
  readonly #lifecycle: ServerLifecycle;

  constructor(options: ManagementServerOptions, source: ResourceSource | undefined) {
    super();
    this.#source = source;
    this.host = options.host ?? "127.0.0.1";
    const port = options.port ?? 0;
    checkPort(port, options.port);
    this.limits = resolveLimits(options);
    this.logger = prefixLogger(
      options.logger ?? loggerFromEnvironment("control-plane") ?? noopLogger,
      "[control-plane]",
    );
    this.flushes = createFlushBatch((error) => this.logger.error("internal error flushing a stream", error));
    const tls = options.tls ? createTlsCredentials(options.tls, this.logger) : undefined;
    this.#access = createStreamAuthorization(options, tls?.mutual === true);
    this.#lifecycle = createServerLifecycle({
      host: this.host,
      port,
      tls,
      logger: this.logger,
      shutdownGraceMs: options.shutdownGraceMs,
      serve: (req, res) => this.#serve(req, res),
      stopping: () => {
        for (const stream of this.#streams.all()) {
          stream.end(Code.Unavailable, "server-stopped", "the management server is stopping");
        }
        this.lrs.endStreams(Code.Unavailable, "the management server is stopping");
      },
      closed: () => {
        this.hooks.cancelWaits("server closed");
        this.lrs.cancelWaits("server closed");
      },
    });
    const historyLimit = options.historyLimit ?? 1000;
    if (!(historyLimit >= 0)) throw new RangeError("historyLimit must be >= 0");
    this.hooks = new HooksImpl(this.logger, historyLimit);
    this.hooks.attach({
      breakStreams: (o) => this.#streams.breakStreams(o),
      abortConnections: () => this.#abortConnections(),
      releaseHeld: () => {
        for (const stream of this.#streams.all()) stream.releaseHeld();
      },
      injectResponse: (streamId, response) => {
        const stream = this.#streams.find(streamId);
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
      onChange: (set, changed) => this.#streams.setChanged(set, changed),
      onScopesChanged: () => {
        for (const stream of this.#streams.all()) stream.rebind();
      },
    });
    this.resolver = source ? sourceResolver(source) : this.store;
    source?.attach((changed) => this.#streams.sourceChanged(changed));
    this.fullStateTypeUrls = new Set(options.fullStateTypeUrls ?? DEFAULT_FULL_STATE_TYPE_URLS);
    this.wrapResources = options.wrapResources ?? false;
    this.controlPlane =
      options.controlPlaneId !== undefined
        ? create(ControlPlaneSchema, { identifier: options.controlPlaneId })
        : undefined;
    this.#serve = createRequestRouter({
      host: this,
      options,
      lrs: () => ({
        sink: source?.serveLrs
          ? { serve: (requests, signal, peer) => source.serveLrs!(requests, signal, peer) }
          : this.lrs,
        admit: this.#access.admit,
        admitted: (node, peer) => this.#access.lrsAdmitted(node, peer),
      }),
      opening: (kind) => {
        if (warmUpStarted(kind)) return;
        void warmUpOnce(kind).then(({ error }) => {
          if (error !== undefined) this.logger.debug(`the ${kind} warm-up stopped early: ${error}`);
        });
      },
    });
  }

  get port(): number {
    return this.#lifecycle.port;
  }

  get url(): string {
    return this.#lifecycle.url;
  }

  get address(): string {
    return this.#lifecycle.address;
  }

  get listening(): boolean {
    return this.#lifecycle.listening;
  }

  streams(): StreamInfo[] {
    return this.#streams.infos();
  }

  // --- StreamHost ----------------------------------------------------------------------------------------------

  register(stream: AdsStream): void {
    this.#streams.add(stream);
  }

  unregister(stream: AdsStream): void {
    this.#streams.remove(stream);
    this.#source?.closed(stream);
  }

  subscribed(stream: AdsStream, sub: TypeSubscription): void {
    this.#source?.subscribed(stream, sub);
    this.#streams.subscribed(stream, sub);
  }

  admit(peer: PeerIdentity, node: Node | undefined): void {
    this.#access.admit(peer, node);
  }

  readAccess(identity: StreamIdentity): ReadAccess | undefined {
    return this.#access.readAccess(identity);
  }

  authorizationChanged(): void {
    if (!this.#access.changed()) return;
    for (const stream of this.#streams.all()) stream.markAllDirty();
  }

  // --- lifecycle -----------------------------------------------------------------------------------------------

  start(): Promise<void> {
    return this.#lifecycle.start();
  }

  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }

  restart(): Promise<void> {
    return this.#lifecycle.restart();
  }

  close(): Promise<void> {
    return this.#lifecycle.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  reloadTls(): Promise<boolean> {
    return this.#lifecycle.reloadTls();
  }

  // --- hooks ---------------------------------------------------------------------------------------------------

  #abortConnections(): number {
    for (const stream of this.#streams.all()) stream.end(undefined, "connection-aborted", "connection aborted");
    return this.#lifecycle.destroySessions();
  }

  // --- LRS -----------------------------------------------------------------------------------------------------

  /** The clusters the LRS sink names to a node's client: those of its set that it may read. */
  #readableClusters(node: Node | undefined): string[] {
    return this.#access.readableClusters(node, this.store.resolve(node).resourceNames(CDS_TYPE_URL));
  }
}

/** Every node is served from the source (the view it gives the node, if any), and no DPDS set wins over it. */
function sourceResolver(source: ResourceSource): ServedResolver {
  const resources = source.resources;
  const resolve = source.resolve ? (node: Node | undefined) => source.resolve?.(node) ?? resources : () => resources;
  return { defaultSet: resources, resolve, resolveDynamicParameters: () => undefined };
}
