import { ValidationError } from '../../base/errors';

/** An API's page cursor over a table's sort key: what a list answers as `next_cursor` and takes back as `cursor`. */
export interface SortKeyCursor {
  encode(sortKey: string): string;
  /** The sort key `cursor` carries; anything else is a 400 on `cursor` with the refusal this codec was made with. */
  decode(cursor: string): string;
}

/**
 * The one cursor codec of the store's lists: a cursor carries only the sort key, never the partition
 * (the account always comes from the caller), and one that does not decode to a key of `shape` is
 * refused rather than silently restarting at the first page.
 */
export function sortKeyCursor(shape: RegExp, refusal: string): SortKeyCursor {
  return {
    encode: (sortKey) => Buffer.from(sortKey, 'utf8').toString('base64url'),
    decode(cursor) {
      const sortKey = Buffer.from(cursor, 'base64url').toString('utf8');
      if (!shape.test(sortKey)) throw new ValidationError(refusal, 'cursor');
      return sortKey;
    },
  };
}
