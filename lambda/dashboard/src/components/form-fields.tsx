import type { ComponentChildren } from 'preact';

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  placeholder: string;
  testId: string;
  onInput: (value: string) => void;
  /** Shown below the field. */
  hint?: string;
  /** Typed as written (tags, model ids): no auto-capitalising, no spell check. */
  literal?: boolean;
  inputMode?: 'numeric' | 'decimal';
}

/** One labelled text field of a settings form, with its hint below when it has one. */
export function TextField({
  id,
  label,
  value,
  placeholder,
  hint,
  testId,
  onInput,
  literal,
  inputMode,
}: TextFieldProps) {
  return (
    <span class="budget-field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        inputMode={inputMode}
        value={value}
        placeholder={placeholder}
        autoComplete="off"
        autoCapitalize={literal ? 'off' : undefined}
        spellcheck={literal ? false : undefined}
        data-testid={testId}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {hint && <span class="hint">{hint}</span>}
    </span>
  );
}

/** A form's submit button: disabled, and saying so, while the save is under way. */
export function SaveButton({ busy, testId, children }: { busy: boolean; testId: string; children: ComponentChildren }) {
  return (
    <button type="submit" class="button button-primary button-small" disabled={busy} data-testid={testId}>
      {busy ? 'Saving…' : children}
    </button>
  );
}
