// "A plain XdsClient and the wrapped one pass the same watcher tests": one suite (support/watcher-suite.ts), run
// against both over real HTTP/2, in state-of-the-world and delta. The wrapped client gets its DPDS resource from the
// same server: it gives every type of the suite a parameter, so each of its watches goes through the wrapper's
// subscriptions (its CSDS names carry `dpds=on`), and the control plane's unconstrained resources match them all.
import { createXdsClient } from "@xdskit/xds-client";
import { DEFAULT_DPDS_RESOURCE_NAME, withDynamicParameters } from "../src/index.js";
import { serveDpds } from "./support/dpds-server.js";
import { EDS_TYPE_NAME, LDS_TYPE_NAME } from "./support/test-types.js";
import { type ApiType, describeWatcherSuite, type Flavor, labelOf } from "./support/watcher-suite.js";

const plain: Flavor = {
  name: "a plain",
  prepare: () => {},
  create: (bootstrap) => createXdsClient({ bootstrap, env: {} }),
  subscriptionName: (name, parameters = {}) => labelOf(name, parameters),
};

const wrapped: Flavor = {
  name: "the wrapped",
  prepare: (server) =>
    serveDpds(server, DEFAULT_DPDS_RESOURCE_NAME, { [LDS_TYPE_NAME]: 'dpds="on"', [EDS_TYPE_NAME]: 'dpds="on"' }),
  create: (bootstrap) => withDynamicParameters(createXdsClient({ bootstrap, env: {} })),
  subscriptionName: (name, parameters = {}) => labelOf(name, { ...parameters, dpds: "on" }),
};

for (const flavor of [plain, wrapped]) {
  for (const apiType of ["GRPC", "DELTA_GRPC"] satisfies ApiType[]) describeWatcherSuite(flavor, apiType);
}
