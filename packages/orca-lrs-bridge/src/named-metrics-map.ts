// The named_metrics map of a report our binary decoder built: besides its keys, it carries its entries as a flat
// [key, value, key, value, ...] list, which the load store reads on every call instead of looking each key up.
// (Reading number-valued properties by computed key can make V8 box each value, an allocation per call; reading
// the list cannot.) The list is taken when the report is decoded: a decoded report is recorded as decoded
// (docs/orca-lrs.md#hot-path).

type Entries = readonly (string | number)[];

export class NamedMetricsMap {
  [key: string]: number;
  #entries: Entries | undefined;

  /** The flat entries of `map`, when it is a NamedMetricsMap; undefined for any other object. */
  static entriesOf(map: object): Entries | undefined {
    return #entries in map ? map.#entries : undefined;
  }

  /** Gives `map` its entries; only when they match its own properties exactly (no duplicate key, none dropped). */
  static attach(map: NamedMetricsMap, entries: Entries): void {
    map.#entries = entries;
  }
}
