import { readStatsPeriod } from '../../../lambda/api/stats-routes';
import { ValidationError } from '../../../lambda/base/errors';

const now = new Date('2026-11-21T13:37:00.000Z');
const read = (query: string) => readStatsPeriod(new URLSearchParams(query), now);

function rejection(query: string): ValidationError {
  try {
    read(query);
  } catch (error) {
    return error as ValidationError;
  }
  throw new Error(`expected ${query} to be rejected`);
}

describe('readStatsPeriod', () => {
  it('defaults to the last seven days up to now', () => {
    expect(read('')).toEqual({ from: new Date('2026-11-14T13:37:00.000Z'), to: now });
    expect(read('to=2026-11-10T00:00:00Z')).toEqual({
      from: new Date('2026-11-03T00:00:00Z'),
      to: new Date('2026-11-10T00:00:00Z'),
    });
    expect(read('from=2026-11-20T00:00:00Z')).toEqual({ from: new Date('2026-11-20T00:00:00Z'), to: now });
  });

  it('accepts ISO 8601 dates and times with or without an offset (UTC when absent)', () => {
    expect(read('from=2026-11-01&to=2026-11-02T10:15').to).toEqual(new Date('2026-11-02T10:15:00Z'));
    expect(read('from=2026-11-01T01:00:00%2B01:00&to=2026-11-02T00:00:00.123456Z').from).toEqual(
      new Date('2026-11-01T00:00:00Z'),
    );
    // An unencoded '+' arrives as a space.
    expect(read('from=2026-11-01T01:00:00+01:00').from).toEqual(new Date('2026-11-01T00:00:00Z'));
    expect(read('from=2026-11-01T01:00:00-0130').from).toEqual(new Date('2026-11-01T02:30:00Z'));
  });

  it.each(['from=yesterday', 'from=2026-11-21T13', 'from=2026-02-30', 'from=1700000000', 'from=21/11/2026'])(
    'rejects %s naming the field',
    (query) => {
      const error = rejection(query);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.status).toBe(400);
      expect(error.details.param).toBe('from');
      expect(error.message).toMatch(/^from must be an ISO 8601 time/);
    },
  );

  it('names `to` when to is malformed', () => {
    expect(rejection('to=soon').details.param).toBe('to');
  });

  it('rejects an empty or reversed period', () => {
    expect(rejection('from=2026-11-02T00:00Z&to=2026-11-02T00:00Z').status).toBe(400);
    expect(rejection('from=2026-11-03T00:00Z&to=2026-11-02T00:00Z').message).toMatch(/earlier than/);
  });

  it('rejects a period over 400 days and accepts exactly 400', () => {
    expect(rejection('from=2025-01-01T00:00Z&to=2026-02-05T00:00:00.001Z').message).toMatch(/400 days/);
    expect(read('from=2025-01-01T00:00Z&to=2026-02-05T00:00Z').from).toEqual(new Date('2025-01-01T00:00Z'));
  });
});
