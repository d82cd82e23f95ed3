// The xDS interop cases with @grpc/grpc-js-xds + @grpc/grpc-js as the client.
import { grpcJsXdsClientKind } from "../src/grpc-js-client.js";
import { defineInteropSuite } from "./interop-suite.js";

defineInteropSuite(grpcJsXdsClientKind);
