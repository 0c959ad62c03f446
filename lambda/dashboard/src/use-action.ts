import { useState } from 'preact/hooks';

/** A form's action in progress: whether it runs, and what went wrong last. */
export interface ActionState {
  busy: boolean;
  error: unknown;
  /** Shows a problem the page found before sending anything (undefined clears it). */
  setError: (error: unknown) => void;
  /**
   * Runs `work` with the last error cleared; any failure becomes the error shown. `showBusy` marks
   * the action busy while it runs (a save disables its button; a quick remove needs no mark).
   * Resolves true when `work` succeeded.
   */
  run: (work: () => Promise<void>, showBusy?: boolean) => Promise<boolean>;
}

/** The busy and error pattern of the dashboard's forms, written once. */
export function useAction(): ActionState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (work: () => Promise<void>, showBusy = true) => {
    if (showBusy) setBusy(true);
    setError(undefined);
    try {
      await work();
      return true;
    } catch (reason) {
      setError(reason);
      return false;
    } finally {
      if (showBusy) setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
