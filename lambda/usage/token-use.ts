import type { TokenToucher } from './ports';

const TOUCH_INTERVAL_MS = 60_000;

/**
 * Records when a token was last used, at most once a minute per token and
 * instance: the dashboard needs "last used", not a write per request.
 */
export class TokenUseTracker {
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly accounts: TokenToucher, private readonly now: () => number = Date.now) {}

  async touch(accountId: string, tokenId: string, usedAt: string): Promise<void> {
    const now = this.now();
    if ((this.lastTouched.get(tokenId) ?? 0) > now - TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(tokenId, now);
    await this.accounts.touchToken(accountId, tokenId, usedAt).catch(() => this.lastTouched.delete(tokenId));
  }
}
