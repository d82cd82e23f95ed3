import type { Entry, ErrorEntry, ResourceEntry } from "./resource-set.js";

/** Marks a name the server told a delta client does not exist (in `removed_resources`). */
export const NOT_FOUND_SENT = -1;
/** A version a delta client claims to hold that this server never issued. */
export const UNKNOWN_VERSION = -2;

/** A version string from a client, as this server's numeric versions (which are decimal counters). */
export function parseVersion(version: string): number {
  return /^[1-9]\d{0,15}$/.test(version) ? Number(version) : UNKNOWN_VERSION;
}

/**
 * What one stream subscribes to for one type, and what the server believes the client holds. Shared by the SotW and
 * delta streams. A resource's identity is its name for now; TP2 variants will key these maps by name and
 * constraints.
 */
export class TypeSubscription {
  readonly typeUrl: string;
  /** Subscribed to every resource of the type (`*`, or the legacy empty first request for LDS/CDS). */
  wildcard = false;
  /** Subscribed by name. */
  readonly names = new Set<string>();
  /** name -> version the client was sent (for SotW LDS/CDS: the last full set). Numbers: no string per entry. */
  readonly sent = new Map<string, number>();
  /** name -> version of the resource error the client was sent. */
  readonly errorsSent = new Map<string, number>();

  constructor(typeUrl: string) {
    this.typeUrl = typeUrl;
  }

  isSubscribed(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }

  /** Sets the explicit names (a `*` among them means wildcard) and forgets what was sent for names left behind. */
  replaceNames(names: Iterable<string>, wildcard: boolean): void {
    this.names.clear();
    for (const name of names) if (name !== "*") this.names.add(name);
    this.wildcard = wildcard;
    this.prune();
  }

  prune(): void {
    for (const name of this.sent.keys()) if (!this.isSubscribed(name)) this.sent.delete(name);
    for (const name of this.errorsSent.keys()) if (!this.names.has(name)) this.errorsSent.delete(name);
  }

  /** Subscribed resources that exist, in the set's order. */
  subscribedResources(entries: ReadonlyMap<string, Entry> | undefined): ResourceEntry[] {
    const out: ResourceEntry[] = [];
    if (!entries) return out;
    if (this.wildcard) {
      for (const entry of entries.values()) if (entry.kind === "resource") out.push(entry);
    } else {
      for (const name of this.names) {
        const entry = entries.get(name);
        if (entry?.kind === "resource") out.push(entry);
      }
    }
    return out;
  }

  /**
   * Resource errors not yet sent. TP3 does not cover wildcard subscriptions: errors go only to names subscribed
   * by name.
   */
  pendingErrors(entries: ReadonlyMap<string, Entry> | undefined): ErrorEntry[] {
    const out: ErrorEntry[] = [];
    if (!entries) return out;
    for (const name of this.names) {
      const entry = entries.get(name);
      if (entry?.kind === "error" && this.errorsSent.get(name) !== entry.version) out.push(entry);
    }
    return out;
  }

  /** Records errors as sent; the client now holds an error, not the resource. */
  markErrorsSent(errors: readonly ErrorEntry[]): void {
    for (const error of errors) {
      this.errorsSent.set(error.name, error.version);
      this.sent.delete(error.name);
    }
  }

  markSent(resources: readonly ResourceEntry[]): void {
    for (const entry of resources) {
      this.sent.set(entry.name, entry.version);
      this.errorsSent.delete(entry.name);
    }
  }
}
