// The `xdskit` command line: one dispatcher, the help texts and the exit codes. Commands get a CliIo, so the
// binary and tests run the same code; nothing here touches process.* (bin.ts does).
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { describeArgsError } from "./args-errors.js";
import { CliError, type CliIo, type CommandSpec, ExitCode, UsageError } from "./command.js";
import { COMMANDS } from "./commands.js";

function commandList(prefix = ""): string {
  return Object.entries(COMMANDS)
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, command]) => `  ${name.padEnd(17)} ${command.summary}`)
    .join("\n");
}

const HELP = `Usage: xdskit <command> [options]

Commands:
${commandList()}

Run \`xdskit <command> --help\` for a command's options; \`xdskit --version\` (or -v, or --version after any command) for
the version.
Exit codes: 0 success, 1 failure, 2 wrong command line.
`;

/** The first word of a command of several words (`bootstrap`), with the usage that lists its commands. */
function groupUsage(word: string): string | undefined {
  const members = Object.keys(COMMANDS).filter((name) => name.startsWith(`${word} `));
  if (members.length === 0) return undefined;
  return `Usage: xdskit ${word} <command> [options]\n\nCommands:\n${commandList(`${word} `)}\n`;
}

function findCommand(argv: readonly string[]): { name: string; command: CommandSpec; rest: string[] } | undefined {
  for (const [name, command] of Object.entries(COMMANDS)) {
    const words = name.split(" ");
    if (words.every((word, i) => argv[i] === word)) return { name, command, rest: argv.slice(words.length) };
  }
  return undefined;
}

async function version(): Promise<string> {
  const manifest = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
  return `xdskit ${manifest.version} (${manifest.name})\n`;
}

/** Runs one command line (without `node` and the script); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === "--version" || first === "-v" || first === "-V") {
    io.stdout(await version());
    return ExitCode.ok;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? findCommand(argv.slice(1)) : undefined;
    if (first === undefined) {
      io.stderr(HELP);
      return ExitCode.usage;
    }
    io.stdout(topic?.command.usage ?? (second ? groupUsage(second) : undefined) ?? HELP);
    return ExitCode.ok;
  }
  const found = findCommand(argv);
  if (!found) {
    const group = groupUsage(first);
    if (group && (second === "--help" || second === "-h")) {
      io.stdout(group);
      return ExitCode.ok;
    }
    if (group) {
      io.stderr(second === undefined ? group : `xdskit: unknown command "${first} ${second}"\n\n${group}`);
      return ExitCode.usage;
    }
    io.stderr(`xdskit: unknown command "${first}"\n\n${HELP}`);
    return ExitCode.usage;
  }
  const { command, rest } = found;
  const options = { ...command.options, help: { type: "boolean", short: "h" }, version: { type: "boolean" } } as const;
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = describeArgsError(error as Error & { code?: string }, Object.keys(options));
    io.stderr(`xdskit ${found.name}: ${message}\n\n${command.usage}`);
    return ExitCode.usage;
  }
  if (parsed.values.help) {
    io.stdout(command.usage);
    return ExitCode.ok;
  }
  if (parsed.values.version) {
    io.stdout(await version());
    return ExitCode.ok;
  }
  try {
    const run = await command.load();
    return await run(parsed.positionals, parsed.values, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`xdskit ${found.name}: ${error.message}\n\n${command.usage}`);
      return ExitCode.usage;
    }
    const text = error instanceof CliError ? error.message : String((error as Error)?.stack ?? error);
    // A message that lists problems ends with a newline already: one line end, never a blank line.
    io.stderr(`xdskit ${found.name}: ${text.replace(/\n+$/, "")}\n`);
    return ExitCode.failure;
  }
}
