// `xdskit watch <type> <name>...`: subscribes through @xdskit/xds-client and prints every update and error as it
// arrives (what grpcurl is for gRPC, for xDS resources).
import type { Message } from "@bufbuild/protobuf";
import { typeNameOfUrl, xdsRegistry } from "@xdskit/protos";
import {
  BootstrapError,
  clusterResourceType,
  createXdsClient,
  endpointResourceType,
  listenerResourceType,
  type ResourceType,
  routeConfigurationResourceType,
  statusCodeName,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";
import { aborted, CliError, type CommandRun, ExitCode, integerOption, UsageError } from "./command.js";
import { messageToJson, unpackAny } from "./proto-json.js";

const SHORT_TYPES: Readonly<Record<string, ResourceType<unknown>>> = {
  lds: listenerResourceType,
  rds: routeConfigurationResourceType,
  cds: clusterResourceType,
  eds: endpointResourceType,
};

/** Any message type of the registry, decoded as is; its `name` field names the resource. */
function genericResourceType(typeUrl: string): ResourceType<Message> {
  return {
    typeUrl,
    typeName: typeNameOfUrl(typeUrl),
    allResourcesRequiredInSotW: false,
    decode(any) {
      const message = unpackAny(any);
      if (!message) return { ok: false, error: `cannot decode ${any.typeUrl}` };
      const name = (message as { name?: unknown }).name;
      if (typeof name !== "string" || name === "") return { ok: false, error: "no name field" };
      return { ok: true, name, value: message };
    },
  };
}

function resolveResourceType(text: string): ResourceType<unknown> {
  const short = SHORT_TYPES[text.toLowerCase()];
  if (short) return short;
  const typeName = typeNameOfUrl(text);
  const known = Object.values(SHORT_TYPES).find((type) => typeNameOfUrl(type.typeUrl) === typeName);
  if (known) return known;
  if (!xdsRegistry.getMessage(typeName)) {
    throw new UsageError(`unknown resource type "${text}": use lds, rds, cds, eds or a type URL known to xdskit`);
  }
  return genericResourceType(`type.googleapis.com/${typeName}`) as ResourceType<unknown>;
}

/** The decoded proto message behind an update: the four built-in types keep it as `raw`. */
function messageOf(value: unknown): Message {
  return ((value as { raw?: Message }).raw ?? value) as Message;
}

function bootstrapOption(values: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>) {
  const server = values.server as string | undefined;
  const file = values.bootstrap as string | undefined;
  if (server !== undefined && file !== undefined) throw new UsageError("give --bootstrap or --server, not both");
  if (server !== undefined) {
    return {
      bootstrap: {
        xds_servers: [{ server_uri: server, channel_creds: [{ type: "insecure" }] }],
        node: { id: (values["node-id"] as string | undefined) ?? "xdskit-cli" },
      },
      env,
    };
  }
  // Through GRPC_XDS_BOOTSTRAP, the client reads the file and resolves its relative paths from the file's folder.
  return { env: file === undefined ? env : { ...env, GRPC_XDS_BOOTSTRAP: file } };
}

export const run: CommandRun = async (positionals, values, io) => {
  const [typeText, ...names] = positionals;
  if (typeText === undefined || names.length === 0) throw new UsageError("expected <type> and at least one <name>");
  const type = resolveResourceType(typeText);
  const count = integerOption(values, "count", 0);
  let client: XdsClient;
  try {
    client = createXdsClient({ ...bootstrapOption(values, io.env), target: "xdskit-cli" });
  } catch (error) {
    if (!(error instanceof BootstrapError)) throw error;
    throw new CliError(`invalid bootstrap:\n${error.problems.map((p) => `  ${p}`).join("\n")}`);
  }
  const done = new AbortController();
  let events = 0;
  const print = (record: Record<string, unknown>, resource?: Message, detail?: string) => {
    if (done.signal.aborted) return;
    const time = new Date().toISOString();
    if (values.json) {
      const json = resource ? { resource: JSON.parse(messageToJson(resource)) } : {};
      io.stdout(`${JSON.stringify({ time, ...record, type: type.typeUrl, ...json })}\n`);
    } else {
      const what =
        record.event === "resource" ? `version ${record.version}` : `${record.event} ${record.code}: ${detail}`;
      io.stdout(`[${time}] ${typeText} ${record.name}: ${what}\n${resource ? `${messageToJson(resource, 2)}\n` : ""}`);
    }
    if (count > 0 && ++events >= count) done.abort();
  };
  const describeError = (name: string, event: string, error: XdsError) =>
    print({ event, name, code: statusCodeName(error.code), message: error.message }, undefined, error.detail);
  const cancels = names.map((name) =>
    client.watch(type, name, {
      onResourceChanged(result) {
        if (result.ok) print({ event: "resource", name, version: result.version }, messageOf(result.resource));
        else describeError(name, "error", result.error);
      },
      onAmbientError: (error) => describeError(name, "ambient_error", error),
    }),
  );
  await Promise.race([aborted(io.signal), aborted(done.signal)]);
  for (const cancel of cancels) cancel();
  await client.close();
  return ExitCode.ok;
};
