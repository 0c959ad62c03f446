import { useEffect, useRef, useState } from 'preact/hooks';

interface Props {
  label: string;
  confirmLabel: string;
  question: string;
  onConfirm: () => Promise<void> | void;
  testId: string;
  disabled?: boolean;
}

/**
 * A destructive action asked twice, inline: no modal to trap focus in, and keyboard users land on the
 * confirming button. Test ids: `<testId>`, `<testId>-confirm`, `<testId>-cancel`.
 */
export function ConfirmButton({ label, confirmLabel, question, onConfirm, testId, disabled }: Props) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);

  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) openerRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button
        type="button"
        class="button button-danger-outline button-small"
        ref={openerRef}
        disabled={disabled}
        data-testid={testId}
        onClick={() => setAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span class="confirm-question">{question}</span>
      <button
        type="button"
        class="button button-danger button-small"
        ref={confirmRef}
        disabled={busy}
        data-testid={`${testId}-confirm`}
        onClick={() => {
          setBusy(true);
          void Promise.resolve()
            .then(onConfirm)
            .finally(() => {
              setBusy(false);
              setAsking(false);
            });
        }}
      >
        {busy ? 'Working…' : confirmLabel}
      </button>
      <button
        type="button"
        class="button button-small"
        data-testid={`${testId}-cancel`}
        onClick={() => setAsking(false)}
      >
        Cancel
      </button>
    </span>
  );
}
