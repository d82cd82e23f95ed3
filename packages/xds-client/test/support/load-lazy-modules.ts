// Setup file of this package's suite. Vitest runs the sources (.ts), which Node's `require` cannot load, so the
// synchronous fallbacks of src/protocol-loader.ts and src/builtin-types.ts (CSDS asked for before any ADS call, a
// built-in type's `decode` called directly) cannot run here. The suite loads both up front, as the fallback would
// on first use; test/lazy-loading.test.ts checks the fallbacks, and what is not loaded, on the build in a fresh Node.
import {
  clusterResourceType,
  decoderLoading,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from "../../src/builtin-types.js";
import { loadProtocol } from "../../src/protocol-loader.js";

await loadProtocol();
for (const type of [clusterResourceType, endpointResourceType, listenerResourceType, routeConfigurationResourceType]) {
  await decoderLoading(type);
}
