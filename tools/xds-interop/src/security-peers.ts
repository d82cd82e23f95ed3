// The two sides of grpc's PSM security and authz cases, each as ours and as the peer's: a client that makes one
// UnaryCall through `xds:///<name>` and reports its outcome, and an xDS-enabled server of grpc.testing.TestService
// that answers with its own name. Ours: @xdskit/connect-xds and @xdskit/connect-xds-server. The peer's:
// @grpc/grpc-js-xds 1.14 with XdsChannelCredentials and XdsServer + XdsServerCredentials (insecure fallbacks), each
// given the bootstrap through the option grpc-js-xds reads before the environment.
import * as net from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import { createXdsServer } from "@xdskit/connect-xds-server";
import type { BootstrapConfig } from "@xdskit/xds-client";
import {
  type SimpleRequest,
  SimpleRequestSchema,
  SimpleResponseSchema,
  TestService,
} from "./gen/grpc/testing/test_pb.js";
import { XDS_BOOTSTRAP_OPTION } from "./grpc-js-client.js";

const UNARY_PATH = "/grpc.testing.TestService/UnaryCall";

/** "OK" with the server's name (`OK ours`), or the status code's name and message. */
export interface Outcome {
  readonly code: string;
  readonly server?: string;
  readonly message: string;
}

export interface SecurityClient {
  call(headers?: Record<string, string>): Promise<Outcome>;
  close(): Promise<void>;
}

/** A call carrying this header waits in the handler until the server's current hold is released. */
export const HOLD_HEADER = "x-hold";

export interface Hold {
  /** Resolves when a call carrying HOLD_HEADER has reached the handler. */
  readonly reached: Promise<void>;
  release(): void;
}

export interface SecurityServer {
  readonly name: string;
  readonly port: number;
  /** Serving-status transitions as reported to the application: "serving", or "not serving: <reason>". */
  readonly statuses: readonly string[];
  /** Resolves at the first "serving". */
  serving(): Promise<void>;
  /** Arms a hold for the calls carrying HOLD_HEADER from now on. */
  hold(): Hold;
  close(): Promise<void>;
}

/** Serving-status transitions, the first "serving", and the hold of the calls carrying HOLD_HEADER. */
function serverState() {
  const statuses: string[] = [];
  let servingNow: () => void = () => {};
  const firstServing = new Promise<void>((resolve) => {
    servingNow = resolve;
  });
  let current: { reached: () => void; released: Promise<void>; release: () => void } | undefined;
  return {
    statuses,
    serving: () => firstServing,
    record(serving: boolean, reason: string) {
      statuses.push(serving ? "serving" : `not serving: ${reason}`);
      if (serving) servingNow();
    },
    hold(): Hold {
      let reached: () => void = () => {};
      let release: () => void = () => {};
      const hold: Hold = {
        reached: new Promise<void>((resolve) => {
          reached = resolve;
        }),
        release: () => release(),
      };
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      current = { reached, released, release: () => release() };
      return hold;
    },
    /** Lets every held call go (at close: a case that failed may not have released its hold). */
    releaseHeld() {
      current?.release();
    },
    /** Waits in the handler when the call carries HOLD_HEADER and a hold is armed. */
    async enter(held: boolean): Promise<void> {
      if (!held || current === undefined) return;
      current.reached();
      await current.released;
    },
  };
}

export type Side = "ours" | "grpc-js-xds";

let registered = false;
function registerPeer(): void {
  if (registered) return;
  grpcJsXds.register();
  registered = true;
}

const DEADLINE_MS = 10_000;

export function securityClient(side: Side, target: string, bootstrap: BootstrapConfig): SecurityClient {
  return side === "ours" ? ourClient(target, bootstrap) : peerClient(target, bootstrap);
}

function ourClient(target: string, bootstrap: BootstrapConfig): SecurityClient {
  const transport = createXdsTransport({ target, bootstrap });
  const client = createClient(TestService, transport);
  return {
    async call(headers = {}) {
      try {
        const response = await client.unaryCall(create(SimpleRequestSchema, {}), { headers, timeoutMs: DEADLINE_MS });
        return { code: "OK", server: response.hostname, message: "" };
      } catch (error) {
        const e = ConnectError.from(error);
        return { code: Code[e.code] ?? String(e.code), message: e.rawMessage };
      }
    },
    close: () => transport.close(),
  };
}

function peerClient(target: string, bootstrap: BootstrapConfig): SecurityClient {
  registerPeer();
  const client = new grpc.Client(target, new grpcJsXds.XdsChannelCredentials(grpc.credentials.createInsecure()), {
    [XDS_BOOTSTRAP_OPTION]: JSON.stringify(bootstrap),
  });
  return {
    call(headers = {}) {
      const metadata = new grpc.Metadata();
      for (const [key, value] of Object.entries(headers)) metadata.add(key, value);
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          UNARY_PATH,
          (value: SimpleRequest) => Buffer.from(toBinary(SimpleRequestSchema, value)),
          (bytes: Buffer) => fromBinary(SimpleResponseSchema, bytes),
          create(SimpleRequestSchema, {}),
          metadata,
          { deadline: Date.now() + DEADLINE_MS },
          (error, response) => {
            if (error !== null) {
              // grpc-js and Connect number the codes alike: one spelling (Connect's names) for the assertions.
              resolve({ code: Code[error.code ?? Code.Unknown] ?? String(error.code), message: error.details ?? "" });
            } else {
              resolve({ code: "OK", server: response?.hostname ?? "", message: "" });
            }
          },
        );
      });
    },
    close: async () => client.close(),
  };
}

/** A free port of 127.0.0.1 (grpc-js-xds's XdsServer binds a port it is given, never 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** An xDS-enabled server on 127.0.0.1, answering UnaryCall with `name`; resolves once bound (serving or not). */
export async function securityServer(side: Side, name: string, bootstrap: BootstrapConfig): Promise<SecurityServer> {
  return side === "ours" ? ourServer(name, bootstrap) : peerServer(name, bootstrap);
}

/** Long enough for a held call to finish after a Listener change or deletion (gRPC's default is 10 minutes). */
const DRAIN_GRACE_MS = 30_000;

async function ourServer(name: string, bootstrap: BootstrapConfig): Promise<SecurityServer> {
  const state = serverState();
  const server = createXdsServer({
    bootstrap,
    drainGraceMs: DRAIN_GRACE_MS,
    onServingStatus: ({ serving, reason }) => state.record(serving, reason ?? ""),
    routes: (router) =>
      router.service(TestService, {
        unaryCall: async (_request, context) => {
          await state.enter(context.requestHeader.has(HOLD_HEADER));
          return create(SimpleResponseSchema, { hostname: name });
        },
        emptyCall: () => ({}),
      }),
  });
  const bound = await server.listen({ host: "127.0.0.1", port: 0 });
  return {
    name,
    port: bound.port,
    statuses: state.statuses,
    serving: state.serving,
    hold: state.hold,
    close: () => {
      state.releaseHeld();
      return server.close();
    },
  };
}

async function peerServer(name: string, bootstrap: BootstrapConfig): Promise<SecurityServer> {
  registerPeer();
  const server = new grpcJsXds.XdsServer({
    [XDS_BOOTSTRAP_OPTION]: JSON.stringify(bootstrap),
    drainGraceTimeMs: DRAIN_GRACE_MS,
  });
  const state = serverState();
  server.addService(
    {
      UnaryCall: {
        path: UNARY_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: SimpleRequest) => Buffer.from(toBinary(SimpleRequestSchema, value)),
        requestDeserialize: (bytes: Buffer) => fromBinary(SimpleRequestSchema, bytes),
        responseSerialize: (value: { hostname: string }) =>
          Buffer.from(toBinary(SimpleResponseSchema, create(SimpleResponseSchema, value))),
        responseDeserialize: (bytes: Buffer) => fromBinary(SimpleResponseSchema, bytes),
      },
    },
    {
      UnaryCall: (
        call: grpc.ServerUnaryCall<SimpleRequest, unknown>,
        callback: grpc.sendUnaryData<{ hostname: string }>,
      ) => {
        state.enter(call.metadata.get(HOLD_HEADER).length > 0).then(() => callback(null, { hostname: name }));
      },
    },
  );
  const port = await freePort();
  // bindAsync calls back once the server is serving (its Listener has arrived), not when bound: do not wait for it.
  server.bindAsync(
    `127.0.0.1:${port}`,
    new grpcJsXds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()),
    () => {},
  );
  // grpc-js-xds reports every serving-state change of the port to these listeners.
  server.addServingStateListener(`127.0.0.1:${port}`, (status) =>
    state.record(status.code === grpc.status.OK, status.details),
  );
  return {
    name,
    port,
    statuses: state.statuses,
    serving: state.serving,
    hold: state.hold,
    close: () =>
      new Promise<void>((resolve) => {
        state.releaseHeld();
        server.tryShutdown(() => resolve());
      }),
  };
}
