// The xDS interop cases with @xdskit/connect-xds (a Connect client over createXdsTransport) as the client.
import { connectXdsClientKind } from "../src/connect-xds-client.js";
import { defineInteropSuite } from "./interop-suite.js";

defineInteropSuite(connectXdsClientKind);
