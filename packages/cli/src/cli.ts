// The `xdskit` command line: one dispatcher, the help texts and the exit codes. Commands get a CliIo, so the
// binary and tests run the same code; nothing here touches process.* (bin.ts does).
import { parseArgs } from "node:util";
import { CliError, type CliIo, type CommandSpec, ExitCode, UsageError } from "./command.js";
import { COMMANDS } from "./commands.js";

const HELP = `Usage: xdskit <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(17)} ${command.summary}`)
  .join("\n")}

Run \`xdskit <command> --help\` for a command's options.
Exit codes: 0 success, 1 failure, 2 wrong command line.
`;

function findCommand(argv: readonly string[]): { name: string; command: CommandSpec; rest: string[] } | undefined {
  for (const [name, command] of Object.entries(COMMANDS)) {
    const words = name.split(" ");
    if (words.every((word, i) => argv[i] === word)) return { name, command, rest: argv.slice(words.length) };
  }
  return undefined;
}

/** Runs one command line (without `node` and the script); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? findCommand(argv.slice(1)) : undefined;
    if (first === undefined) {
      io.stderr(HELP);
      return ExitCode.usage;
    }
    io.stdout(topic ? topic.command.usage : HELP);
    return ExitCode.ok;
  }
  const found = findCommand(argv);
  if (!found) {
    io.stderr(`xdskit: unknown command "${argv.join(" ")}"\n\n${HELP}`);
    return ExitCode.usage;
  }
  const { command, rest } = found;
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      io.stdout(command.usage);
      return ExitCode.ok;
    }
    const run = await command.load();
    return await run(positionals, values as Record<string, string | boolean | undefined>, io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`xdskit ${found.name}: ${(error as Error).message}\n\n${command.usage}`);
      return ExitCode.usage;
    }
    io.stderr(
      `xdskit ${found.name}: ${error instanceof CliError ? error.message : String((error as Error)?.stack ?? error)}\n`,
    );
    return ExitCode.failure;
  }
}
