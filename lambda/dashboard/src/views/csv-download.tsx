import { useState } from 'preact/hooks';
import { useApi } from '../api-context';
import type { Query } from '../api';

/** Downloads `/api/logs.csv` for the current filters (every matching row, not just the rows on screen). */
export function CsvDownload({ query }: { query: Query }) {
  const api = useApi();
  const [state, setState] = useState<'idle' | 'busy' | 'failed'>('idle');
  const download = async () => {
    setState('busy');
    try {
      const blob = await api.logsCsv(query);
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `usage-logs-${new Date().toISOString().slice(0, 10)}.csv`;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setState('idle');
    } catch {
      setState('failed');
    }
  };
  return (
    <button
      type="button"
      class="button button-small"
      data-testid="logs-csv"
      disabled={state === 'busy'}
      onClick={() => void download()}
      title="Every row matching the filters, as CSV"
    >
      {state === 'busy' ? 'Preparing CSV…' : state === 'failed' ? 'CSV failed, retry' : 'Download CSV'}
    </button>
  );
}
