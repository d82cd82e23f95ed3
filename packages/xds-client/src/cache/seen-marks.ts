// Which subscriptions a SotW LDS/CDS response gave something to (a resource, valid or not, or an error): those it
// gave nothing to and that hold a resource are deleted. A response of 10,000 resources marks 10,000 entries, so the
// set is a number written on each entry, not a Set (a Set of that size cost more than the rest of a re-push's apply).
import type { ResourceState } from "../state/resource-state.js";

let lastMark = 0;

/** One response's marks: a fresh number, so an entry marked by an earlier response does not count. */
export class SeenMarks {
  private readonly mark = ++lastMark;
  /** How many distinct entries were marked. */
  size = 0;

  add(state: ResourceState): void {
    if (state.seenMark === this.mark) return;
    state.seenMark = this.mark;
    this.size += 1;
  }

  has(state: ResourceState): boolean {
    return state.seenMark === this.mark;
  }
}
