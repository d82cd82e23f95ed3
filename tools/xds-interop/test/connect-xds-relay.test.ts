// The document's xDS interop cases with @xdskit/connect-xds as the client, its configuration coming through an
// @xdskit/xds-relay in front of the control plane (the same driver and assertions as connect-xds.test.ts).
import { DOCUMENT_CASES } from "../src/cases/index.js";
import { connectXdsClientKind } from "../src/connect-xds-client.js";
import { defineInteropSuite } from "./interop-suite.js";

defineInteropSuite(connectXdsClientKind, { relay: true, cases: DOCUMENT_CASES });
