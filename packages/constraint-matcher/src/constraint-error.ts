/** Where in its input a constraint problem was found. */
export interface ConstraintErrorLocation {
  /** Proto or draft dialect: a field path such as `and_constraints.constraints[2].constraint`. */
  readonly path?: string;
  /** Text dialect: the 1-based column (in UTF-16 code units) where the problem starts. */
  readonly column?: number;
}

/**
 * Invalid constraint input (a oneof left unset, an empty and/or list, a range with min > max, bad text, a shape
 * that cannot become parameters). Every function of this package that rejects its input throws this error and
 * never answers true or false in its place: callers NACK with `message`, which always names the position.
 */
export class ConstraintError extends Error {
  override readonly name = "ConstraintError";
  readonly path: string | undefined;
  readonly column: number | undefined;
  /** The problem alone, without the position prefix. */
  readonly reason: string;

  constructor(reason: string, location: ConstraintErrorLocation = {}) {
    super(formatMessage(reason, location));
    this.reason = reason;
    this.path = location.path;
    this.column = location.column;
  }
}

function formatMessage(reason: string, location: ConstraintErrorLocation): string {
  if (location.column !== undefined) return `column ${location.column}: ${reason}`;
  if (location.path !== undefined && location.path !== "") return `${location.path}: ${reason}`;
  return reason;
}

/** Joins a field path and a child segment: `joinPath("", "a")` is `a`, `joinPath("a", "b[1]")` is `a.b[1]`. */
export function joinPath(base: string, segment: string): string {
  return base === "" ? segment : `${base}.${segment}`;
}
