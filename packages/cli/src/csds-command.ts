// `xdskit csds <address>`: asks any CSDS server (ours, gRPC's admin services) for its clients'
// config and prints one table per client, or the response as proto JSON.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { formatClientConfig } from "@xdskit/csds";
import {
  ClientStatusDiscoveryService,
  type ClientStatusResponse,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { CliError, type CommandRun, ExitCode, integerOption, sleep, UsageError } from "./command.js";
import { messageToJson } from "./proto-json.js";

/** Under tables with errors: how to read the last error column. */
export const LAST_ERROR_LEGEND =
  'last error: "<version>: <details>", the version of the response the error came with; "-" when nothing was received (the does-not-exist timer)';

function renderClientStatus(response: ClientStatusResponse, json: boolean): string {
  if (json) return `${messageToJson(response, 2)}\n`;
  if (response.config.length === 0) return "no xDS clients\n";
  const errors = response.config.some((c) => c.genericXdsConfigs.some((g) => g.errorState !== undefined));
  return `${response.config.map(formatClientConfig).join("\n\n")}\n${errors ? `\n${LAST_ERROR_LEGEND}\n` : ""}`;
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length !== 1) throw new UsageError("expected one <address>");
  const address = positionals[0]!;
  const baseUrl = /^https?:\/\//.test(address) ? address : `http://${address}`;
  const intervalMs = integerOption(values, "interval-ms", 1000);
  const timeoutMs = integerOption(values, "timeout-ms", 5000);
  const client = createClient(ClientStatusDiscoveryService, createGrpcTransport({ baseUrl }));
  const fetchOnce = async (): Promise<string> => {
    try {
      const response = await client.fetchClientStatus({}, { timeoutMs, signal: io.signal });
      return renderClientStatus(response, values.json === true);
    } catch (error) {
      throw new CliError(`no answer from CSDS at ${address}: ${(error as Error).message}`);
    }
  };
  if (!values.watch) {
    io.stdout(await fetchOnce());
    return ExitCode.ok;
  }
  // Watching: a failed request is shown like an answer (once, until the answer changes) and asked again.
  let last = "";
  while (!io.signal.aborted) {
    const text = await fetchOnce().catch((error: Error) => (io.signal.aborted ? last : `${error.message}\n`));
    if (text !== last) {
      io.stdout(`${last === "" ? "" : "\n"}--- ${new Date().toISOString()}\n${text}`);
      last = text;
    }
    await sleep(intervalMs, io.signal);
  }
  return ExitCode.ok;
};
