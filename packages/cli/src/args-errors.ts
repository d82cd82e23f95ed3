// node:util parseArgs reports command-line mistakes in its own words ("Unknown option '--x'. To specify a positional
// argument starting with a '-', place it at the end of the command after '--', as in '-- "--x"'"); these are ours.

/** The edit distance of two short strings (for "did you mean"). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The names of `known` close enough to `name` to be what was meant (for "did you mean"). */
export function closeNames(name: string, known: readonly string[]): string[] {
  return known.filter((k) => distance(name, k) <= Math.max(1, Math.floor(k.length / 4)));
}

function suggestion(option: string, known: readonly string[]): string {
  const name = option.replace(/^-+/, "").replace(/=.*$/, "");
  const close = closeNames(name, known);
  return close.length > 0 ? ` (did you mean ${close.map((k) => `--${k}`).join(" or ")}?)` : "";
}

/** A parseArgs error as one short sentence; `known` are the command's option names. */
export function describeArgsError(error: Error & { code?: string }, known: readonly string[]): string {
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? "";
  const option = quoted.replace(/ <value>$/, "");
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${option}${suggestion(option, known)}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return /does not take an argument/.test(error.message) ? `${option} takes no value` : `${option} needs a value`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${quoted}`;
    default:
      return error.message;
  }
}
