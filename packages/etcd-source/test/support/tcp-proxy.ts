// A TCP proxy in front of etcd that a test can cut: `cut()` drops every connection and refuses new ones (etcd is
// unreachable for whoever goes through the proxy, and up for everyone else), `restore()` lets them through again.
import { connect, createServer, type Server, type Socket } from "node:net";
import { onCleanup } from "./etcd.js";

export interface TcpProxy {
  /** `127.0.0.1:<port>`. */
  readonly endpoint: string;
  cut(): void;
  restore(): void;
  /** Stops forwarding without closing anything (a peer that went silent); `thaw()` forwards again. */
  freeze(): void;
  thaw(): void;
}

export async function tcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = target.split(":") as [string, string];
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let open = true;
  let frozen = false;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), host);
    sockets.add(client).add(upstream);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      pairs.delete(pair);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    if (!frozen) {
      client.pipe(upstream);
      upstream.pipe(client);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const proxyPort = typeof address === "object" && address ? address.port : 0;
  const cut = () => {
    open = false;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  );
  return {
    endpoint: `127.0.0.1:${proxyPort}`,
    cut,
    restore: () => {
      open = true;
    },
    freeze: () => {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    thaw: () => {
      frozen = false;
      for (const [client, upstream] of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
      }
    },
  };
}
