import type { Tags } from '../tags/tags';

const MAX_TOKENS = 10_000;

interface Seen {
  hasBudget: boolean;
  tags: Tags;
}

/**
 * What this instance last saw on each token's gate that calls for a budget read: whether the
 * token has a budget of its own, and its tags (each may have a tag budget). For those, the budget
 * reads start beside the gate call instead of after it: one wave before forwarding. The gate's
 * answer decides; a hint only chooses when to start a read.
 */
export class TokenBudgetHints {
  private readonly seen = new Map<string, Seen>();

  expects(tokenId: string): boolean {
    return this.seen.get(tokenId)?.hasBudget ?? false;
  }

  /** The token's tags as last seen; none for a token this instance hasn't seen. */
  expectedTags(tokenId: string): Tags {
    return this.seen.get(tokenId)?.tags ?? {};
  }

  note(tokenId: string, hasBudget: boolean, tags: Tags = {}): void {
    if (!hasBudget && Object.keys(tags).length === 0) {
      this.seen.delete(tokenId);
      return;
    }
    if (this.seen.size >= MAX_TOKENS && !this.seen.has(tokenId)) this.seen.clear();
    this.seen.set(tokenId, { hasBudget, tags });
  }
}
