/**
 * How declared table calls become a role's statements (lambda/store/table-calls.ts): writes are
 * limited to partitions only when every call writing that table says which; reads never are.
 */
import { CONSUMER_TABLE_CALLS, tableGrants, type TableCalls } from '../../../lambda/store/table-calls';

const alerts: TableCalls = {
  code: 'A',
  table: 'accounts',
  actions: ['PutItem', 'GetItem'],
  purpose: 'a',
  writesTo: ['ACCOUNT#*#ALERTS'],
};

it('splits a table into its reads and its writes limited to the declared partitions', () => {
  const counters: TableCalls = { ...alerts, code: 'B', actions: ['UpdateItem'], writesTo: ['ACCOUNT#*#T#*'] };
  expect(tableGrants([alerts, counters])).toEqual([
    { table: 'accounts', actions: ['GetItem'] },
    { table: 'accounts', actions: ['PutItem', 'UpdateItem'], leadingKeys: ['ACCOUNT#*#ALERTS', 'ACCOUNT#*#T#*'] },
  ]);
});

it('grants the whole table when any call writing it declares no partitions, rather than refuse that call', () => {
  const unscoped: TableCalls = { code: 'C', table: 'accounts', actions: ['UpdateItem'], purpose: 'c' };
  expect(tableGrants([alerts, unscoped])).toEqual([
    { table: 'accounts', actions: ['GetItem', 'PutItem', 'UpdateItem'] },
  ]);
});

it("limits the consumer's accounts writes to its alert and budget subjects' partitions", () => {
  expect(tableGrants(CONSUMER_TABLE_CALLS).filter((g) => g.table === 'accounts')).toEqual([
    { table: 'accounts', actions: ['BatchGetItem', 'GetItem'] },
    {
      table: 'accounts',
      actions: ['PutItem', 'UpdateItem'],
      leadingKeys: ['ACCOUNT#*#ALERTS', 'ACCOUNT#*#G#*', 'ACCOUNT#*#R#*', 'ACCOUNT#*#T#*'],
    },
  ]);
});
