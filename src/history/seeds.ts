import type { ParsedSnapshot } from './replay.js';

/**
 * Per conversation, the last snapshot replayed: a later run's first snapshot mostly repeats it, so its
 * parse can be reused. With a plan (the conversations of the runs about to be replayed, in order), a
 * seed is dropped once its conversation has no run left, so memory follows the conversations still
 * open, not all of them.
 */
export class ConversationSeeds {
  private readonly seeds = new Map<string, ParsedSnapshot>();
  private readonly remaining = new Map<string, number>();

  constructor(planned: Iterable<string | null> = []) {
    for (const c of planned) if (c !== null) this.remaining.set(c, (this.remaining.get(c) ?? 0) + 1);
  }

  seedFor(conversation: string | null): ParsedSnapshot | null {
    return conversation === null ? null : (this.seeds.get(conversation) ?? null);
  }

  /** A run of `conversation` was replayed; `last` is its last snapshot parsed (null: keep the current seed). */
  done(conversation: string | null, last: ParsedSnapshot | null): void {
    if (conversation === null) return;
    const left = this.remaining.get(conversation);
    if (left !== undefined) {
      if (left <= 1) {
        this.remaining.delete(conversation);
        this.seeds.delete(conversation);
        return;
      }
      this.remaining.set(conversation, left - 1);
    }
    if (last) this.seeds.set(conversation, last);
  }
}
