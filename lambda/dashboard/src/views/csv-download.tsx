import { useApi } from '../api-context';
import type { Query } from '../api';
import { useAction } from '../use-action';

/** Downloads `/api/logs.csv` for the current filters (every matching row, not just the rows on screen). */
export function CsvDownload({ query }: { query: Query }) {
  const api = useApi();
  const { busy, error, run } = useAction();
  const download = () =>
    run(async () => {
      const blob = await api.logsCsv(query);
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `usage-logs-${new Date().toISOString().slice(0, 10)}.csv`;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  return (
    <button
      type="button"
      class="button button-small"
      data-testid="logs-csv"
      disabled={busy}
      onClick={() => void download()}
      title="Every row matching the filters, as CSV"
    >
      {busy ? 'Preparing CSV…' : error !== undefined ? 'CSV failed, retry' : 'Download CSV'}
    </button>
  );
}
