import { Allowed } from '../../caller';
import { useState } from 'preact/hooks';
import { useApi } from '../../api-context';
import { useAction } from '../../use-action';
import { ConfirmButton } from '../../components/confirm-button';
import { EmptyState } from '../../components/empty-state';
import { ErrorMessage } from '../../components/error-message';
import { SkeletonRows } from '../../components/skeleton';
import type { AccountPrice, PriceInput } from '../../types';
import { useAsync } from '../../use-async';
import { SaveButton } from '../../components/form-fields';

type Way = 'tokens' | 'as';
const RATE_FIELDS = [
  ['input', 'Input'],
  ['output', 'Output'],
  ['cache_read', 'Cache read'],
  ['cache_write', 'Cache write'],
] as const;
type RateField = (typeof RATE_FIELDS)[number][0];

/** A number as typed, sent as typed when it is not one, so the server's message names the field. */
const asNumber = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

function describe(price: AccountPrice): string {
  if ('priced_as' in price) return `as ${price.priced_as}`;
  const parts = RATE_FIELDS.filter(([field]) => price[field] !== undefined).map(
    ([field, label]) => `${label.toLowerCase()} $${price[field]}`,
  );
  return `${parts.join(' · ')} per 1M tokens`;
}

/**
 * The account's own prices: models the price list doesn't know (fine-tuned ids, Bedrock application
 * inference profiles, self-hosted models) priced per token or as a listed model, so their spend
 * counts and a budget no longer refuses them (docs/usage-and-pricing.md, "Account prices").
 */
export function ModelPrices() {
  const api = useApi();
  const prices = useAsync(() => api.prices(), []);
  const [model, setModel] = useState('');
  const [way, setWay] = useState<Way>('tokens');
  const [rates, setRates] = useState<Record<RateField, string>>({
    input: '',
    output: '',
    cache_read: '',
    cache_write: '',
  });
  const [pricedAs, setPricedAs] = useState('');
  const { busy, error, setError, run } = useAction();

  const add = async (event: Event) => {
    event.preventDefault();
    if (!model.trim()) {
      setError(new Error('Enter a model id, or a pattern ending in * (ft:gpt-4o:acme:*).'));
      return;
    }
    const input: PriceInput =
      way === 'as'
        ? { priced_as: pricedAs.trim() }
        : ({
            input: asNumber(rates.input),
            output: asNumber(rates.output),
            cache_read: asNumber(rates.cache_read),
            cache_write: asNumber(rates.cache_write),
          } as PriceInput);
    await run(async () => {
      await api.setPrice(model.trim(), input);
      setModel('');
      setPricedAs('');
      setRates({ input: '', output: '', cache_read: '', cache_write: '' });
      prices.reload();
    });
  };

  return (
    <section class="card table-card" data-testid="model-prices" aria-labelledby="model-prices-title">
      <h2 class="card-title" id="model-prices-title">
        Model prices
      </h2>
      <p class="muted token-intro">
        Price models the built-in price list doesn't know — fine-tuned ids, Bedrock application inference profiles,
        self-hosted models — in USD per million tokens, or as a listed model. A budget refuses a model without a price;
        a price here overrides the built-in one for this account. A pattern ending in <code>*</code> prices every id
        that starts with it; an exact id wins over a pattern, a longer pattern over a shorter one.
      </p>
      <Allowed role="admin">
        <form class="budget-form budget-add" onSubmit={(event) => void add(event)} data-testid="price-add">
          <span class="budget-field">
            <label for="price-new-model">Model or pattern</label>
            <input
              id="price-new-model"
              type="text"
              value={model}
              autoComplete="off"
              autoCapitalize="off"
              spellcheck={false}
              placeholder="e.g. ft:gpt-4o:acme:*"
              data-testid="price-new-model"
              onInput={(e) => setModel(e.currentTarget.value)}
            />
          </span>
          <span class="budget-field">
            <label for="price-new-way">Priced</label>
            <select
              id="price-new-way"
              value={way}
              data-testid="price-new-way"
              onChange={(e) => setWay(e.currentTarget.value as Way)}
            >
              <option value="tokens">per token</option>
              <option value="as">as a listed model</option>
            </select>
          </span>
          {way === 'as' ? (
            <span class="budget-field">
              <label for="price-new-as">Listed model</label>
              <input
                id="price-new-as"
                type="text"
                value={pricedAs}
                autoComplete="off"
                placeholder="e.g. gpt-4o"
                data-testid="price-new-as"
                onInput={(e) => setPricedAs(e.currentTarget.value)}
              />
            </span>
          ) : (
            RATE_FIELDS.map(([field, label]) => (
              <span class="budget-field price-rate" key={field}>
                <label for={`price-new-${field}`}>{label} $/1M</label>
                <input
                  id={`price-new-${field}`}
                  type="number"
                  min="0"
                  step="any"
                  inputMode="decimal"
                  value={rates[field]}
                  placeholder={field.startsWith('cache') ? 'optional' : ''}
                  data-testid={`price-new-${field}`}
                  onInput={(e) => {
                    const value = e.currentTarget.value;
                    setRates((current) => ({ ...current, [field]: value }));
                  }}
                />
              </span>
            ))
          )}
          <span class="budget-actions">
            <SaveButton busy={busy} testId="price-new-save">
              Set price
            </SaveButton>
          </span>
        </form>
      </Allowed>
      <ErrorMessage error={error} testId="price-new-error" />
      <ErrorMessage error={prices.error} testId="prices-load-error" onRetry={prices.reload} />
      {!prices.data ? (
        <SkeletonRows rows={2} label="Loading model prices…" />
      ) : prices.data.prices.length === 0 ? (
        <EmptyState title="No model prices yet." testId="prices-empty" />
      ) : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Model prices">
          <table class="table" data-testid="prices-table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Price</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {prices.data.prices.map((price) => (
                <tr key={price.model} data-testid="price-row" data-model={price.model}>
                  <td data-label="Model" class="break mono">
                    {price.model}
                  </td>
                  <td data-label="Price">{describe(price)}</td>
                  <td data-label="Actions">
                    <Allowed role="admin">
                      <ConfirmButton
                        label="Remove"
                        confirmLabel="Remove price"
                        question={`Remove the price of ${price.model}?`}
                        testId="price-remove"
                        onConfirm={async () => {
                          await run(() => api.removePrice(price.model), false);
                          prices.reload();
                        }}
                      />
                    </Allowed>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
