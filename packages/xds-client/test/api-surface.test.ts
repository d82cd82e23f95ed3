// The public entry points: end users get the client, its types and errors; the knobs for tests and sibling packages
// (virtual clocks, backoff, the feature resolver, the environment log reader) live behind `./internal` only, outside
// semver.
import { describe, expect, it } from "vitest";
import * as main from "../src/index.js";
import * as internal from "../src/internal.js";

describe("the package's entry points", () => {
  it("keeps the ./internal knobs out of the main entry", () => {
    const knobs = Object.keys(internal);
    expect(knobs.sort()).toEqual([
      "GRPC_TRACERS",
      "LOG_COMPONENTS",
      "MAX_PROGRAM_SIZE",
      "OLD_STYLE_AUTHORITY",
      "RegexError",
      "compileHeaderValueMatcher",
      "compileRegex",
      "compileRewrite",
      "compileStringMatcher",
      "createBackoff",
      "createXdsClientWithInternals",
      "environmentLogLevel",
      "errorMessage",
      "loggerFromEnvironment",
      "parseResourceName",
      "resolveFeatures",
      "systemClock",
    ]);
    for (const knob of knobs) expect(Object.keys(main)).not.toContain(knob);
  });

  it("exports the client, the error brand check and the four resource types", () => {
    for (const name of [
      "createXdsClient",
      "isXdsError",
      "XdsError",
      "StatusCode",
      "DEFAULT_CONNECT_TIMEOUT_MS",
      "listenerResourceType",
      "routeConfigurationResourceType",
      "clusterResourceType",
      "endpointResourceType",
      "createConnectTransport",
    ]) {
      expect(Object.keys(main)).toContain(name);
    }
  });
});
