interface ChangeLogEntry {
  readonly version: number;
  readonly names: string[];
}

/** Versions of a type kept in its log: a client further behind is compared in full. */
const CHANGE_LOG_VERSIONS = 64;

/**
 * What recent versions of one type changed, by resource name (a change to any variant of a name logs the name). It
 * lets a push of a few changes cost the changes (held-diff.ts). Bounded: the last CHANGE_LOG_VERSIONS versions, and
 * no more names than the type holds (past that, comparing everything costs no more than reading the log).
 */
export class ChangeLog {
  /** The version before the oldest entry kept (-1: none dropped). */
  #floor = -1;
  readonly #entries: ChangeLogEntry[] = [];
  #names = 0;
  /** The last answer of `since`, until the log changes: every stream settled at one version asks the same. */
  #last: { readonly version: number; readonly names: readonly string[] | undefined } | undefined;

  /** Starts a new version. */
  open(version: number): void {
    this.#entries.push({ version, names: [] });
    this.#last = undefined;
  }

  /** Logs a name changed in the version opened last; `typeSize`: how many names the type holds. */
  log(name: string, typeSize: number): void {
    this.#last = undefined;
    (this.#entries.at(-1) as ChangeLogEntry).names.push(name);
    this.#names++;
    const budget = Math.max(1024, typeSize);
    while (this.#entries.length > 1 && (this.#entries.length > CHANGE_LOG_VERSIONS || this.#names > budget)) {
      const dropped = this.#entries.shift() as ChangeLogEntry;
      this.#floor = dropped.version;
      this.#names -= dropped.names.length;
    }
  }

  /**
   * Names changed after `version` (one of the type's versions), in the order they last changed; undefined when the
   * log no longer reaches back that far, or `version` is not one of this type's.
   */
  since(version: number): readonly string[] | undefined {
    if (this.#last?.version === version) return this.#last.names;
    const names = this.#compute(version);
    this.#last = { version, names };
    return names;
  }

  #compute(version: number): readonly string[] | undefined {
    const from = this.#entries.findIndex((entry) => entry.version === version);
    if (from < 0 && this.#floor !== version) return undefined;
    const names = new Set<string>();
    for (const entry of this.#entries.slice(from + 1)) {
      for (const name of entry.names) {
        names.delete(name);
        names.add(name);
      }
    }
    return Object.freeze([...names]);
  }
}
