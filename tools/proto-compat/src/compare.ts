// Compares the descriptors of our proto/ tree with the upstream .proto files that @grpc/grpc-js-xds ships, field by
// field. What it reports is a list of differences as readable lines; an empty list means wire-compatible.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { DescEnum, DescField, DescFile, DescMessage, DescService } from "@bufbuild/protobuf";
import { createFileRegistry, fromBinary, ScalarType } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import protobuf from "protobufjs";

const require = createRequire(import.meta.url);

/** Where the upstream snapshot keeps its proto roots. */
export function upstreamRoots(): string[] {
  const deps = join(dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  const roots = ["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(deps, d));
  // The ORCA protos (cncf/xds) ship with @grpc/grpc-js; google/protobuf/descriptor.proto, which the annotation
  // files import, ships with protobufjs.
  const grpcJs = join(dirname(require.resolve("@grpc/grpc-js/package.json")), "proto");
  return [
    ...roots,
    join(grpcJs, "xds"),
    join(grpcJs, "protoc-gen-validate"),
    dirname(require.resolve("protobufjs/package.json")),
  ];
}

/** Builds the proto tree at `protoDir` with buf and returns its files (imports such as the WKTs excluded). */
export function buildOurFiles(protoDir: string): DescFile[] {
  const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
  const out = mkdtempSync(join(tmpdir(), "xdskit-compat-"));
  try {
    const image = join(out, "image.binpb");
    execFileSync(buf, ["build", protoDir, "--as-file-descriptor-set", "-o", image], { stdio: "pipe" });
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(image));
    const registry = createFileRegistry(set);
    const ours: DescFile[] = [];
    for (const proto of set.file) {
      if (proto.name.startsWith("google/protobuf/")) continue;
      const file = registry.getFile(proto.name);
      if (file) ours.push(file);
    }
    return ours;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Loads the upstream files with the same paths as ours (those that exist upstream). */
export function loadUpstream(paths: string[]): protobuf.Root {
  const roots = upstreamRoots();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of roots) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync(paths, { keepCase: true });
  root.resolveAll();
  return root;
}

export function upstreamHasFile(path: string): boolean {
  return upstreamRoots().some((dir) => existsSync(join(dir, path)));
}

const scalarNames: Record<number, string> = {
  [ScalarType.DOUBLE]: "double",
  [ScalarType.FLOAT]: "float",
  [ScalarType.INT64]: "int64",
  [ScalarType.UINT64]: "uint64",
  [ScalarType.INT32]: "int32",
  [ScalarType.FIXED64]: "fixed64",
  [ScalarType.FIXED32]: "fixed32",
  [ScalarType.BOOL]: "bool",
  [ScalarType.STRING]: "string",
  [ScalarType.BYTES]: "bytes",
  [ScalarType.UINT32]: "uint32",
  [ScalarType.SFIXED32]: "sfixed32",
  [ScalarType.SFIXED64]: "sfixed64",
  [ScalarType.SINT32]: "sint32",
  [ScalarType.SINT64]: "sint64",
};

/** A field's shape written the same way for both sides: `repeated T`, `map<K,V>`, or `T`. */
function ourShape(field: DescField): string {
  switch (field.fieldKind) {
    case "scalar":
      return scalarNames[field.scalar] ?? "?";
    case "enum":
      return field.enum.typeName;
    case "message":
      return field.message.typeName;
    case "list": {
      const inner =
        field.listKind === "scalar"
          ? scalarNames[field.scalar]
          : field.listKind === "enum"
            ? field.enum.typeName
            : field.message.typeName;
      return `repeated ${inner}`;
    }
    case "map": {
      const value =
        field.mapKind === "scalar"
          ? scalarNames[field.scalar]
          : field.mapKind === "enum"
            ? field.enum.typeName
            : field.message.typeName;
      return `map<${scalarNames[field.mapKey]},${value}>`;
    }
  }
}

function upstreamTypeName(field: protobuf.Field): string {
  const resolved = field.resolvedType;
  if (resolved) return resolved.fullName.replace(/^\./, "");
  return field.type;
}

function theirShape(field: protobuf.Field): string {
  if (field instanceof protobuf.MapField) return `map<${field.keyType},${upstreamTypeName(field)}>`;
  const inner = upstreamTypeName(field);
  return field.repeated ? `repeated ${inner}` : inner;
}

function theirOneof(field: protobuf.Field): string | undefined {
  const name = field.partOf?.name;
  // protobufjs models proto3 `optional` as a synthetic oneof named `_<field>`; protobuf-es does not.
  return name === undefined || name.startsWith("_") ? undefined : name;
}

function lookup<T extends protobuf.ReflectionObject>(
  root: protobuf.Root,
  name: string,
  kind: new (...a: never[]) => T,
) {
  try {
    const found = root.lookup(name);
    return found instanceof kind ? found : undefined;
  } catch {
    return undefined;
  }
}

function compareMessage(message: DescMessage, root: protobuf.Root, out: string[]): void {
  const theirs = lookup(root, message.typeName, protobuf.Type);
  if (!theirs) {
    out.push(`message ${message.typeName}: not found upstream`);
    return;
  }
  for (const field of message.fields) {
    const where = `field ${message.typeName}.${field.name}`;
    const their = theirs.fields[field.name];
    if (!their) {
      out.push(`${where} (= ${field.number}): not found upstream`);
      continue;
    }
    if (their.id !== field.number) out.push(`${where}: number ${field.number}, upstream ${their.id}`);
    const a = ourShape(field);
    const b = theirShape(their);
    if (a !== b) out.push(`${where}: type ${a}, upstream ${b}`);
    const ourOneof = field.oneof?.name;
    const theirOneofName = theirOneof(their);
    if (ourOneof !== theirOneofName) {
      out.push(`${where}: oneof ${ourOneof ?? "(none)"}, upstream ${theirOneofName ?? "(none)"}`);
    }
  }
  for (const nested of message.nestedMessages) compareMessage(nested, root, out);
  for (const nested of message.nestedEnums) compareEnum(nested, root, out);
}

function compareEnum(desc: DescEnum, root: protobuf.Root, out: string[]): void {
  const theirs = lookup(root, desc.typeName, protobuf.Enum);
  if (!theirs) {
    out.push(`enum ${desc.typeName}: not found upstream`);
    return;
  }
  for (const value of desc.values) {
    const where = `enum value ${desc.typeName}.${value.name}`;
    const number = theirs.values[value.name];
    if (number === undefined) out.push(`${where} (= ${value.number}): not found upstream`);
    else if (number !== value.number) out.push(`${where}: number ${value.number}, upstream ${number}`);
  }
}

function compareService(service: DescService, root: protobuf.Root, out: string[]): void {
  const theirs = lookup(root, service.typeName, protobuf.Service);
  if (!theirs) {
    out.push(`service ${service.typeName}: not found upstream`);
    return;
  }
  for (const method of service.methods) {
    const where = `method ${service.typeName}.${method.name}`;
    const their = theirs.methods[method.name];
    if (!their) {
      out.push(`${where}: not found upstream`);
      continue;
    }
    their.resolve();
    const ours = `${method.input.typeName} -> ${method.output.typeName} (${method.methodKind})`;
    const kind =
      their.requestStream && their.responseStream
        ? "bidi_streaming"
        : their.requestStream
          ? "client_streaming"
          : their.responseStream
            ? "server_streaming"
            : "unary";
    const upstream = `${their.resolvedRequestType?.fullName.replace(/^\./, "")} -> ${their.resolvedResponseType?.fullName.replace(/^\./, "")} (${kind})`;
    if (ours !== upstream) out.push(`${where}: ${ours}, upstream ${upstream}`);
  }
}

/** Every difference between our files and upstream, as one line each. */
export function compareWithUpstream(files: DescFile[]): string[] {
  const out: string[] = [];
  const present = files.filter((f) => upstreamHasFile(f.proto.name));
  for (const file of files) {
    if (!present.includes(file)) out.push(`file ${file.proto.name}: no upstream file at this path`);
  }
  const root = loadUpstream(present.map((f) => f.proto.name));
  for (const file of files) {
    for (const message of file.messages) compareMessage(message, root, out);
    for (const desc of file.enums) compareEnum(desc, root, out);
    for (const service of file.services) compareService(service, root, out);
  }
  return out;
}
