/**
 * The management API's paths are named once (lambda/api/paths.ts): the router serves each of them,
 * and the dashboard's client can only build URLs from them. The `@ts-expect-error` lines are
 * checked by `npm run typecheck`: if one of them compiled, it would fail.
 */
import { API_PATHS, pathTo } from '../../../lambda/api/paths';
import { API_ROUTES } from '../../../lambda/api/router';
import { request } from '../../../lambda/dashboard/src/api';

it('the router serves every named path, and names no other', () => {
  const served = new Set(API_ROUTES.map((route) => route.path));
  expect([...served].sort()).toEqual(Object.values(API_PATHS).sort());
});

it('a path is built from its pattern, each segment percent-encoded', () => {
  expect(pathTo(API_PATHS.tagBudget, { key: 'team', value: 'a/b c' })).toBe('/api/budgets/tags/team/a%2Fb%20c');
  expect(pathTo(API_PATHS.logRow, { id: 'r-1' })).toBe('/api/logs/r-1');
});

it('the dashboard cannot name a path the router lacks, nor leave out a segment', () => {
  const calls = () => {
    // @ts-expect-error not a path of the management API
    void request(null, 'GET', '/api/keyz');
    // @ts-expect-error the token's id is missing
    void pathTo(API_PATHS.tokenBudget, {});
  };
  expect(calls).toEqual(expect.any(Function));
});
