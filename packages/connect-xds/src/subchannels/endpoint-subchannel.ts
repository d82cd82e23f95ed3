// One subchannel for an endpoint with several addresses (A61, dual stack): a pick_first policy over the endpoint's
// addresses (flattened, families interleaved, Happy Eyeballs) behind the Subchannel interface, so the policies that
// balance over endpoints (round_robin, ring_hash, least_request, weighted_round_robin, outlier detection) keep one
// subchannel per endpoint. gRPC builds the same thing as a pick_first child per endpoint; here the petiole policy
// sees a subchannel whose connection (`delegate`) is whichever address pick_first chose. See
// docs/decisions.md#connect-xds-dual-stack.
import type {
  ConnectivityState,
  LbEndpoint,
  LbHelper,
  LbPolicy,
  LoadReportListener,
  Picker,
  PickInfo,
  Subchannel,
} from "../balancer/lb-policy.js";
import { type PickFirstConfig, pickFirstPolicy } from "../policies/pick-first.js";
import type { WorkSerializer } from "../shared/work-serializer.js";

/** pick_first's READY picker returns its one subchannel whatever the call; this stands for "any call". */
const ANY_CALL = Object.freeze({ path: "", headers: new Headers() }) as unknown as PickInfo;

const IN_ORDER: PickFirstConfig = Object.freeze({ shuffleAddressList: false });

/** What the endpoint subchannel needs from the transport: its helper (for the addresses' subchannels) and serializer. */
export type EndpointSubchannelBase = Omit<LbHelper, "updateState" | "createEndpointSubchannel" | "requestReresolution">;

class PickFirstSubchannel implements Subchannel {
  readonly address: string;
  private current: ConnectivityState = "IDLE";
  private chosen: Subchannel | undefined;
  private policy: LbPolicy<PickFirstConfig> | undefined;
  private listeners: ((state: ConnectivityState) => void)[] = [];
  /** Out-of-band report listeners, each with its subscription on the chosen address's subchannel (A51, A61). */
  private readonly reportListeners = new Map<LoadReportListener, (() => void) | undefined>();
  private closed = false;
  lastError: Error | undefined;

  constructor(
    readonly endpoint: LbEndpoint,
    private readonly base: EndpointSubchannelBase,
    private readonly serializer: WorkSerializer,
  ) {
    this.address = endpoint.addresses[0] ?? "";
  }

  get state(): ConnectivityState {
    return this.current;
  }

  /** The address's subchannel pick_first chose (while READY): the call path sends calls on its connection. */
  get delegate(): Subchannel | undefined {
    return this.chosen;
  }

  watch(listener: (state: ConnectivityState) => void): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** IDLE: starts pick_first (created on first use, as A61's ring_hash does) or asks it to reconnect. */
  requestConnection(): void {
    if (this.closed || this.current !== "IDLE") return;
    if (this.policy !== undefined) {
      this.policy.exitIdle();
      return;
    }
    const helper: LbHelper = {
      ...this.base,
      createSubchannel: (address, endpoint) => {
        const sub = this.base.createSubchannel(address, endpoint);
        sub.watch((state) => {
          if (state === "TRANSIENT_FAILURE" && sub.lastError !== undefined) this.lastError = sub.lastError;
        });
        return sub;
      },
      // Only pick_first's addresses: a child of it never asks for these.
      createEndpointSubchannel: () => {
        throw new Error("pick_first under an endpoint subchannel creates address subchannels only");
      },
      // The policy holding this subchannel sees it fail and asks itself.
      requestReresolution: () => {},
      updateState: (state, picker) => this.onPickFirst(state, picker),
    };
    this.policy = pickFirstPolicy.create(helper);
    this.policy.update({ config: IN_ORDER, endpoints: [this.endpoint] });
  }

  /** A51: reports from whichever address is connected, following pick_first's choice. */
  watchLoadReports(listener: LoadReportListener): () => void {
    if (this.closed) return () => {};
    this.reportListeners.set(listener, this.chosen?.watchLoadReports?.(listener));
    return () => {
      this.reportListeners.get(listener)?.();
      this.reportListeners.delete(listener);
    };
  }

  private onPickFirst(state: ConnectivityState, picker: Picker): void {
    if (this.closed) return;
    const pick = state === "READY" ? picker.pick(ANY_CALL) : undefined;
    const chosen = pick?.type === "complete" ? pick.subchannel : undefined;
    if (chosen !== this.chosen) {
      for (const [listener, stop] of this.reportListeners) {
        stop?.();
        this.reportListeners.set(listener, chosen?.watchLoadReports?.(listener));
      }
    }
    this.chosen = chosen;
    if (state === this.current) return;
    this.current = state;
    // Through the serializer, as connections' changes are: never inside the policy call that caused it.
    this.serializer.run(() => {
      if (this.closed) return;
      for (const listener of this.listeners) listener(state);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listeners = [];
    for (const stop of this.reportListeners.values()) stop?.();
    this.reportListeners.clear();
    this.policy?.close();
    this.policy = undefined;
    this.chosen = undefined;
  }
}

/** The subchannel of `endpoint`: its address's own subchannel when it has one address, else a pick_first over them. */
export function createEndpointSubchannel(
  endpoint: LbEndpoint,
  base: EndpointSubchannelBase,
  serializer: WorkSerializer,
): Subchannel {
  const [first, ...rest] = endpoint.addresses;
  if (first === undefined) throw new Error("an endpoint without addresses has no subchannel");
  if (rest.length === 0) return base.createSubchannel(first, endpoint);
  return new PickFirstSubchannel(endpoint, base, serializer);
}
