const MAX_TOKENS = 10_000;

/**
 * Which tokens had a budget of their own when this instance last saw their gate. For those, the
 * budget read starts beside the gate call instead of after it: one wave before forwarding. The
 * gate's answer decides; a hint only chooses when to start the read.
 */
export class TokenBudgetHints {
  private readonly withBudget = new Set<string>();

  expects(tokenId: string): boolean {
    return this.withBudget.has(tokenId);
  }

  note(tokenId: string, hasBudget: boolean): void {
    if (!hasBudget) {
      this.withBudget.delete(tokenId);
      return;
    }
    if (this.withBudget.size >= MAX_TOKENS) this.withBudget.clear();
    this.withBudget.add(tokenId);
  }
}
