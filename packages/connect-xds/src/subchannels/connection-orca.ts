// A51's out-of-band load reports of one backend connection: one ORCA StreamCoreMetrics call (the bridge's OOB client)
// on the connection's own Connect transport, so on the same HTTP/2 session as the calls, running while the connection
// is READY and someone listens. A connection that leaves READY cancels the call; back to READY, a new one starts.
// See docs/decisions.md#policies-wrr.
import type { Transport } from "@connectrpc/connect";
import { type Clock, createOrcaOobClient, type Logger, type OrcaOobClient } from "@xdskit/orca-lrs-bridge";
import type { ConnectivityState, LoadReportListener } from "../balancer/lb-policy.js";

export class ConnectionOrca {
  private client: OrcaOobClient | undefined;
  /** Each listener, with what unsubscribes it from the current client. */
  private readonly listeners = new Map<LoadReportListener, (() => void) | undefined>();
  private ready = false;

  constructor(
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly logger: Logger | undefined,
  ) {}

  add(listener: LoadReportListener): () => void {
    this.listeners.set(listener, this.client?.subscribe(listener));
    this.sync();
    return () => {
      if (!this.listeners.has(listener)) return;
      this.listeners.get(listener)?.();
      this.listeners.delete(listener);
      this.sync();
    };
  }

  /** The connection's state changed. */
  onState(state: ConnectivityState): void {
    this.ready = state === "READY";
    this.sync();
  }

  private sync(): void {
    const wanted = this.ready && this.listeners.size > 0;
    if (wanted && this.client === undefined) {
      const client = createOrcaOobClient({
        transport: this.transport,
        clock: this.clock,
        ...(this.logger === undefined ? {} : { logger: this.logger }),
      });
      this.client = client;
      for (const listener of this.listeners.keys()) this.listeners.set(listener, client.subscribe(listener));
    } else if (!wanted && this.client !== undefined) {
      this.client.close();
      this.client = undefined;
      for (const listener of this.listeners.keys()) this.listeners.set(listener, undefined);
    }
  }

  close(): void {
    this.listeners.clear();
    this.client?.close();
    this.client = undefined;
  }
}
