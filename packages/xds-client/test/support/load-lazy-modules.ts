// Setup file of this package's suite. Vitest runs the sources (.ts), which Node's `require` cannot load, so the
// synchronous loads of src/protocol/protocol-loader.ts and src/client/builtin-types.ts (CSDS, the protocol module before any ADS
// call, a built-in type's `decode` called directly) cannot run here. The suite loads them up front, as `require`
// would on first use; test/lazy-loading.test.ts checks the fallbacks, and what is not loaded, on the build in a fresh Node.
import {
  clusterResourceType,
  decoderLoading,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from "../../src/client/builtin-types.js";
import { loadCsds, loadProtocol } from "../../src/protocol/protocol-loader.js";

await loadProtocol();
await loadCsds();
for (const type of [clusterResourceType, endpointResourceType, listenerResourceType, routeConfigurationResourceType]) {
  await decoderLoading(type);
}
