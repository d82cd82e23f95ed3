// The bootstrap grpc-js-xds reads from the channel option `grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config`
// (resolver-xds.js in its build/): a JSON string, and a private XdsClient per channel. That keeps each test's
// client apart and leaves process.env alone (GRPC_XDS_BOOTSTRAP_CONFIG would be read once per process).
export const XDS_BOOTSTRAP_OPTION = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";

export function bootstrapJson(serverAddress: string, nodeId: string): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: serverAddress, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: { id: nodeId, cluster: "interop", locality: { region: "local", zone: "a" } },
  });
}
