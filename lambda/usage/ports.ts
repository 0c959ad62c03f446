/**
 * What recording a usage row needs of the other stores, declared here so that
 * `usage/` depends on no storage module: the adapters in `store/` satisfy these
 * (`AccountStore`) and `deps.ts` passes them in.
 */
export interface TokenToucher {
  touchToken(accountId: string, tokenId: string, usedAt: string): Promise<void>;
}
