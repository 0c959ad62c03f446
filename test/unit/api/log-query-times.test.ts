import { readLogQuery } from '../../../lambda/api/log-routes';
import { ValidationError } from '../../../lambda/base/errors';

/** `/api/logs` reads `from` and `to` with the same strictness as `/api/stats`. */
describe('readLogQuery times', () => {
  it('reads dates and offset-less times as UTC, and offsets as given', () => {
    expect(readLogQuery(new URLSearchParams('from=2026-11-01&to=2026-11-02T10:15'))).toMatchObject({
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-11-02T10:15:00.000Z',
    });
    expect(readLogQuery(new URLSearchParams('from=2026-11-01T01:00:00+01:00')).from).toBe('2026-11-01T00:00:00.000Z');
  });

  it.each(['from=2026-02-30', 'from=Nov 21 2026', 'to=1700000000'])('rejects %s naming the field', (query) => {
    const field = query.split('=')[0];
    expect(() => readLogQuery(new URLSearchParams(query))).toThrow(ValidationError);
    expect(() => readLogQuery(new URLSearchParams(query))).toThrow(new RegExp(`^${field} must be an ISO 8601 time`));
  });
});
