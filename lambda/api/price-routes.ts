import * as z from 'zod/mini';
import {
  MAX_ACCOUNT_PRICES,
  MAX_PATTERN_BYTES,
  normalModelId,
  patternProblem,
  utf8Bytes,
  type AccountPrice,
} from '../account-prices/account-price';
import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { unsafeCharacterIn } from '../base/plain-text';
import { PROVIDER_IDS } from '../providers/catalog';
import { hasAtMostSixDecimals, jsonBody, parseBody, strictBody } from './request-body';
import type { ApiCall, ApiRoute, ManageCall } from './route-types';
import { API_PATHS } from './paths';

/** Far above any list price: a larger number is a typo (dollars per token instead of per million). */
const MAX_PER_MILLION = 100_000;
const rateError = (field: string) =>
  `${field} must be a price in USD per million tokens: a number from 0 to ${MAX_PER_MILLION}, with at most 6 decimals.`;
/** Rates are kept in pico-dollars per token: 6 decimals of a dollar per million tokens, and no finer. */
const perMillion = (field: string) =>
  z
    .number({ error: rateError(field) })
    .check(
      z.gte(0, rateError(field)),
      z.lte(MAX_PER_MILLION, rateError(field)),
      z.refine(hasAtMostSixDecimals, `${field} can have at most 6 decimal places (USD per million tokens).`),
    );

const PRICED_AS_ERROR = `priced_as must be the id of a model the built-in prices know (e.g. "gpt-4o"), at most ${MAX_PATTERN_BYTES} bytes in UTF-8.`;

/** `{"input": 2.5, "output": 10, "cache_read"?: 1.25, "cache_write"?: 3}` or `{"priced_as": "gpt-4o"}`. */
const priceBody = strictBody(
  {
    input: z.optional(perMillion('input')),
    output: z.optional(perMillion('output')),
    cache_read: z.optional(perMillion('cache_read')),
    cache_write: z.optional(perMillion('cache_write')),
    priced_as: z.optional(
      z.string({ error: PRICED_AS_ERROR }).check(
        z.minLength(1, PRICED_AS_ERROR),
        z.refine((text) => utf8Bytes(text) <= MAX_PATTERN_BYTES, PRICED_AS_ERROR),
        z.refine((text) => unsafeCharacterIn(text) === undefined, PRICED_AS_ERROR),
      ),
    ),
  },
  '"input" and "output" (with "cache_read" and "cache_write" if you like), or "priced_as" alone',
);

/** The model id or pattern of the path: plain text, one trailing `*` at most. */
function modelParam({ params }: ApiCall): string {
  const model = params.model.trim();
  // Counted as the store keys it: lower-cased, in UTF-8 bytes.
  if (!model || utf8Bytes(normalModelId(model)) > MAX_PATTERN_BYTES)
    throw new ValidationError(
      `model must be a model id or pattern of 1 to ${MAX_PATTERN_BYTES} bytes in UTF-8 (${MAX_PATTERN_BYTES} ASCII characters; fewer of other scripts).`,
      'model',
    );
  const unsafe = unsafeCharacterIn(model);
  if (unsafe) throw new ValidationError(`model holds ${unsafe}, a control or bidirectional character.`, 'model');
  const problem = patternProblem(model);
  if (problem) throw new ValidationError(`model: ${problem}.`, 'model');
  return normalModelId(model);
}

function parsePrice(call: ManageCall, model: string): AccountPrice {
  const body = parseBody(jsonBody(call), priceBody);
  const updated_at = new Date(call.deps.now()).toISOString();
  const { priced_as: pricedAs, input, output, cache_read, cache_write } = body;
  if (pricedAs !== undefined) {
    if (input !== undefined || output !== undefined || cache_read !== undefined || cache_write !== undefined)
      throw new ValidationError('Send either "priced_as" or token prices, not both.', 'priced_as');
    if (!PROVIDER_IDS.some((provider) => call.deps.prices.has(provider, pricedAs)))
      throw new ValidationError(
        `priced_as: no built-in price for "${pricedAs.slice(0, 200)}"; name a model the price list knows, or give token prices.`,
        'priced_as',
      );
    return { model, priced_as: pricedAs.trim(), updated_at };
  }
  if (input === undefined) throw new ValidationError(rateError('input'), 'input');
  if (output === undefined) throw new ValidationError(rateError('output'), 'output');
  return { model, rates: { input, output, cache_read, cache_write }, updated_at };
}

/** A price as the API shows it: flat, like the body that set it. */
export function priceJson(price: AccountPrice) {
  if (price.priced_as !== undefined)
    return { model: price.model, priced_as: price.priced_as, updated_at: price.updated_at };
  return { model: price.model, ...price.rates, updated_at: price.updated_at };
}

/** One account price as `GET /api/prices` lists it. */
export type PriceJson = ReturnType<typeof priceJson>;

/** The body of `PUT /api/prices/{model}`: token prices, or a catalogued model's. */
export type PriceInput =
  { input: number; output: number; cache_read?: number; cache_write?: number } | { priced_as: string };

/** The account's own prices (docs/usage-and-pricing.md, "Account prices"). */
export const priceRoutes: ApiRoute[] = [
  {
    method: 'GET',
    path: API_PATHS.prices,
    access: 'manage',
    async handle({ deps, caller }) {
      const prices = await deps.accountPrices.list(caller.accountId);
      const sorted = [...prices].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
      return jsonResponse(200, { prices: sorted.map(priceJson) });
    },
  },
  {
    method: 'PUT',
    path: API_PATHS.price,
    access: 'manage',
    async handle(call) {
      const { deps, caller } = call;
      const model = modelParam(call);
      const price = parsePrice(call, model);
      // The cap is checked by the store in the write itself: a list read first could be stale, or race another instance.
      if ((await deps.accountPrices.put(caller.accountId, price)) === 'full')
        throw new ValidationError(
          `This account already has ${MAX_ACCOUNT_PRICES} prices, the most it keeps: delete one, or price several models with one pattern (ft:gpt-4o:acme:*).`,
          'model',
        );
      return jsonResponse(200, priceJson(price));
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.price,
    access: 'manage',
    async handle(call) {
      const model = modelParam(call);
      if (!(await call.deps.accountPrices.delete(call.caller.accountId, model)))
        throw new NotFoundError(`No price for "${model.slice(0, 200)}" in this account.`);
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
];
