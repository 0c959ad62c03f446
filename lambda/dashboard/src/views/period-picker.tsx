import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { PRESETS, toLocalDateInput, type Period } from '../period';

interface Props {
  period: Period;
  onChange: (period: Period) => void;
  /** Shown on the same row as the period buttons (the refresh button). */
  children?: ComponentChildren;
}

export function PeriodPicker({ period, onChange, children }: Props) {
  const today = toLocalDateInput(new Date());
  const [customOpen, setCustomOpen] = useState(period.kind === 'custom');
  const [from, setFrom] = useState(period.from ?? today);
  const [to, setTo] = useState(period.to ?? today);
  const invalid = from > to;

  return (
    <div class="period">
      <div class="period-row">
        <div class="segmented" role="group" aria-label="Period">
          {PRESETS.map((preset) => (
            <button
              type="button"
              key={preset.kind}
              class="segment"
              aria-pressed={period.kind === preset.kind}
              data-testid={`period-${preset.kind}`}
              onClick={() => {
                setCustomOpen(false);
                onChange({ kind: preset.kind });
              }}
            >
              {preset.label}
            </button>
          ))}
          <button
            type="button"
            class="segment"
            aria-pressed={period.kind === 'custom'}
            aria-expanded={customOpen}
            aria-controls="custom-period"
            data-testid="period-custom"
            onClick={() => setCustomOpen(!customOpen)}
          >
            Custom
          </button>
        </div>
        {children}
      </div>
      {customOpen && (
        <form
          id="custom-period"
          class="custom-period"
          onSubmit={(event) => {
            event.preventDefault();
            if (!invalid) onChange({ kind: 'custom', from, to });
          }}
        >
          <label>
            From
            <input
              type="date"
              value={from}
              max={today}
              required
              data-testid="custom-from"
              onInput={(e) => setFrom(e.currentTarget.value)}
            />
          </label>
          <label>
            To
            <input
              type="date"
              value={to}
              required
              data-testid="custom-to"
              onInput={(e) => setTo(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="button button-small" disabled={invalid} data-testid="custom-apply">
            Apply
          </button>
          {invalid && (
            <span class="field-error" role="alert">
              “From” must not be after “To”.
            </span>
          )}
        </form>
      )}
    </div>
  );
}
