// Subchannels: each policy's handle on the transport's one connection per address (docs/decisions.md#connect-xds-connections).
// A connection exists while some handle holds it and closes (gracefully) when the last one is closed.
// State changes reach handles through the work serializer, so a policy never runs inside another policy's callback.
import type { Transport } from "@connectrpc/connect";
import type { Clock, Logger } from "@xdskit/orca-lrs-bridge";
import type { ConnectivityState, LbEndpoint, LoadReportListener, Subchannel } from "../balancer/lb-policy.js";
import { type Dialer, Http2Connection } from "../connections/connection.js";
import type { KeepaliveConfig } from "../connections/keepalive.js";
import { endpointSecurity } from "../credentials/upstream-tls.js";
import { createEndpointTransport, type EndpointTransportSettings } from "../grpc/endpoint-transport.js";
import type { WorkSerializer } from "../shared/work-serializer.js";
import { ConnectionOrca } from "./connection-orca.js";

export interface SubchannelPoolOptions {
  readonly clock: Clock;
  readonly random: () => number;
  readonly serializer: WorkSerializer;
  readonly transportOptions: EndpointTransportSettings;
  readonly dial?: Dialer;
  readonly minConnectTimeoutMs?: number;
  /** For the out-of-band ORCA clients' warnings. */
  readonly logger?: Logger;
  /** A8 keepalive of every connection; none when undefined. */
  readonly keepalive?: KeepaliveConfig;
}

interface PoolEntry {
  readonly connection: Http2Connection;
  /** Connects, or, while the pool is idle, remembers that a policy asked (A9). */
  readonly requestConnection: () => void;
  readonly transport: Transport;
  readonly orca: ConnectionOrca;
  readonly handles: Set<PooledSubchannel>;
}

export class PooledSubchannel implements Subchannel {
  private listeners: ((state: ConnectivityState) => void)[] = [];
  private readonly reportListeners = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly entry: PoolEntry,
    readonly endpoint: LbEndpoint,
    private readonly release: (handle: PooledSubchannel) => void,
  ) {}

  get address(): string {
    return this.entry.connection.options.address;
  }
  get state(): ConnectivityState {
    return this.entry.connection.state;
  }
  get lastError(): Error | undefined {
    return this.entry.connection.lastError;
  }
  /** The Connect transport of the connection (the call path sends picked calls here). */
  get transport(): Transport {
    return this.entry.transport;
  }

  watch(listener: (state: ConnectivityState) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Runs in the serializer, after the connection's state changed. */
  notify(state: ConnectivityState): void {
    if (this.closed) return;
    for (const listener of this.listeners) listener(state);
  }

  requestConnection(): void {
    if (!this.closed) this.entry.requestConnection();
  }

  /** A51: on this connection's own OOB stream; the listener goes when this handle is closed. */
  watchLoadReports(listener: LoadReportListener): () => void {
    if (this.closed) return () => {};
    const remove = this.entry.orca.add(listener);
    const stop = () => {
      this.reportListeners.delete(stop);
      remove();
    };
    this.reportListeners.add(stop);
    return stop;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listeners = [];
    for (const stop of [...this.reportListeners]) stop();
    this.release(this);
  }
}

export interface SubchannelPool {
  acquire(address: string, endpoint: LbEndpoint): PooledSubchannel;
  /** A9: every connection closes (once its calls end) and goes IDLE; connection requests wait for `exitIdle`. */
  enterIdle(): void;
  /** A9: the connections asked for while idle connect. */
  exitIdle(): void;
  /**
   * Closes every connection the pool holds, whatever still holds its subchannels (the transport closed); a
   * connection acquired afterwards never connects.
   */
  close(): void;
}

export function createSubchannelPool(options: SubchannelPoolOptions): SubchannelPool {
  const entries = new Map<string, PoolEntry>();
  let idle = false;
  const wanted = new Set<PoolEntry>();
  let closed = false;
  const release = (key: string) => (handle: PooledSubchannel) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entry.handles.delete(handle);
    if (entry.handles.size === 0) {
      entries.delete(key);
      wanted.delete(entry);
      // The OOB stream first: the connection closes once its last stream has ended.
      entry.orca.close();
      entry.connection.close();
    }
  };
  return {
    acquire(address, endpoint) {
      // One connection per address and security (upstream-tls.ts): clusters with different TLS never share one.
      const security = endpointSecurity(endpoint);
      const key = security === undefined ? address : `${address}\n${security.key}`;
      let entry = entries.get(key);
      if (entry === undefined) {
        const handles = new Set<PooledSubchannel>();
        const connection = new Http2Connection({
          address,
          clock: options.clock,
          random: options.random,
          ...(security === undefined
            ? options.dial === undefined
              ? {}
              : { dial: options.dial }
            : { dial: security.dial, secure: true }),
          ...(options.minConnectTimeoutMs === undefined ? {} : { minConnectTimeoutMs: options.minConnectTimeoutMs }),
          ...(options.keepalive === undefined ? {} : { keepalive: options.keepalive }),
          onStateChange: (state) =>
            options.serializer.run(() => {
              orca.onState(state);
              for (const handle of handles) handle.notify(state);
            }),
        });
        const transport = createEndpointTransport(connection, options.transportOptions);
        const orca = new ConnectionOrca(transport, options.clock, options.logger);
        const made: PoolEntry = {
          connection,
          transport,
          orca,
          handles,
          requestConnection: () => {
            if (idle) wanted.add(made);
            else connection.requestConnection();
          },
        };
        entry = made;
        entries.set(key, entry);
        if (closed) {
          orca.close();
          connection.close();
        }
      }
      const handle = new PooledSubchannel(entry, endpoint, release(key));
      entry.handles.add(handle);
      return handle;
    },
    enterIdle() {
      idle = true;
      for (const entry of entries.values()) entry.connection.disconnect();
    },
    exitIdle() {
      idle = false;
      const asked = [...wanted];
      wanted.clear();
      for (const entry of asked) entry.connection.requestConnection();
    },
    close() {
      closed = true;
      for (const entry of entries.values()) {
        entry.orca.close();
        entry.connection.close();
      }
    },
  };
}
