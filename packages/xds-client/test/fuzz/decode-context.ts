// The DecodeContext of the fuzz properties, from a real bootstrap (so the server config inside is frozen the way
// the client's is).
import { type DecodeContext, parseBootstrap } from "../../src/index.js";
import { resolveFeatures } from "../../src/internal.js";

const bootstrap = parseBootstrap({
  xds_servers: [{ server_uri: "xds.example.com:443", channel_creds: [{ type: "insecure" }] }],
  node: { id: "fuzz" },
});

export const context: DecodeContext = Object.freeze({
  server: bootstrap.xdsServers[0]!,
  bootstrap,
  features: resolveFeatures({}, {}),
});
