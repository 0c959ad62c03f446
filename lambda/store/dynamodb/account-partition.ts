/** The accounts table keeps everything of one account in one partition: its tokens, provider keys and budgets. */
export const accountPk = (accountId: string) => `ACCOUNT#${accountId}`;
