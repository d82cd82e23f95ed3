// The xDS interop cases with @xdskit/connect-xds's transport and a Connect client.
import { connectXdsClientKind } from "../src/connect-xds-client.js";
import { defineInteropSuite } from "./interop-suite.js";

defineInteropSuite(connectXdsClientKind);
