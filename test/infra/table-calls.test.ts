/**
 * The declared DynamoDB calls (lambda/store/table-calls.ts) against the code that sends them: every
 * store command in lambda/ sits in a declared class, and each class's declared actions are
 * exactly the ones its source sends. The stack grants the declared actions and nothing else
 * (test/infra/least-privilege.test.ts), so a grant without a use, or a use without a grant,
 * fails here or there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONSUMER_TABLE_CALLS, PROXY_TABLE_CALLS, type DynamoAction } from '../../lambda/store/table-calls';
import { PROJECT_ROOT } from './support/synth';

interface ClassSource {
  name: string;
  file: string;
  start: number;
  end: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'dashboard' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every class declaration with the span of its body (braces counted; the sources keep them balanced in strings). */
function classesOf(file: string, text: string): ClassSource[] {
  const found: ClassSource[] = [];
  for (const match of text.matchAll(/\bclass\s+(\w+)[^{]*\{/g)) {
    let depth = 1;
    let at = match.index + match[0].length;
    while (depth > 0 && at < text.length) {
      if (text[at] === '{') depth++;
      else if (text[at] === '}') depth--;
      at++;
    }
    found.push({ name: match[1], file, start: match.index, end: at });
  }
  return found;
}

/** The IAM actions a piece of source sends: operations by name, a transaction by its actions. */
function actionsAt(text: string): { action: DynamoAction; index: number }[] {
  const sent: { action: DynamoAction; index: number }[] = [];
  for (const m of text.matchAll(/\boperation:\s*'(\w+)'/g)) {
    if (m[1] !== 'TransactWriteItems') sent.push({ action: m[1] as DynamoAction, index: m.index });
  }
  const inTransaction: Record<string, DynamoAction> = {
    Put: 'PutItem',
    Update: 'UpdateItem',
    Delete: 'DeleteItem',
    ConditionCheck: 'ConditionCheckItem',
  };
  for (const m of text.matchAll(/\{\s*(Put|Update|Delete|ConditionCheck)\s*:/g))
    sent.push({ action: inTransaction[m[1]], index: m.index });
  return sent;
}

const files = sourceFiles(path.join(PROJECT_ROOT, 'lambda'));
const sources = new Map(files.map((file) => [file, fs.readFileSync(file, 'utf8')]));
const classes = files.flatMap((file) => classesOf(file, sources.get(file)!));
const declared = [...PROXY_TABLE_CALLS, ...CONSUMER_TABLE_CALLS];

/** What each class sends, and any store command outside a class. */
const sentByClass = new Map<string, Set<DynamoAction>>();
const outsideClasses: string[] = [];
for (const [file, text] of sources) {
  for (const { action, index } of actionsAt(text)) {
    const owner = classes.find(
      (c) =>
        c.file === file &&
        c.start <= index &&
        index < c.end &&
        !classes.some(
          (inner) =>
            inner !== c && inner.file === file && c.start < inner.start && inner.start <= index && index < inner.end,
        ),
    );
    if (!owner) {
      outsideClasses.push(`${path.relative(PROJECT_ROOT, file)}: ${action}`);
      continue;
    }
    const set = sentByClass.get(owner.name) ?? new Set<DynamoAction>();
    set.add(action);
    sentByClass.set(owner.name, set);
  }
}

describe('declared DynamoDB calls (lambda/store/table-calls.ts) match the code', () => {
  it('finds the store commands it reads (the scan itself works)', () => {
    expect(sentByClass.get('DynamoUsageLog')).toEqual(new Set(['PutItem', 'GetItem', 'Query']));
    expect(sentByClass.get('WatermarkedCounters')).toEqual(new Set(['UpdateItem']));
  });

  it('every store command is sent from a class, so it can be declared', () => {
    expect(outsideClasses).toEqual([]);
  });

  it('every class that sends store commands is declared, with exactly the actions it sends', () => {
    const declaredByClass = new Map<string, Set<DynamoAction>>();
    for (const { code, actions } of declared)
      declaredByClass.set(code, new Set([...(declaredByClass.get(code) ?? []), ...actions]));
    const asLists = (map: Map<string, Set<DynamoAction>>) =>
      Object.fromEntries([...map].map(([name, set]) => [name, [...set].sort()]).sort());
    expect(asLists(declaredByClass)).toEqual(asLists(sentByClass));
  });

  it('names each declared class once in lambda/, so the scan reads the right source', () => {
    for (const { code } of declared)
      expect(classes.filter((c) => c.name === code).map((c) => path.relative(PROJECT_ROOT, c.file))).toHaveLength(1);
  });

  it('gives the proxy no delete, batch write or update on the usage history, and the consumer writes only rollups, spend and alerts', () => {
    const proxyOn = (table: string) =>
      new Set(PROXY_TABLE_CALLS.filter((c) => c.table === table).flatMap((c) => c.actions));
    for (const table of ['usageLogs', 'usageStats']) {
      for (const forbidden of ['DeleteItem', 'BatchWriteItem', 'UpdateItem'])
        expect(proxyOn(table).has(forbidden as DynamoAction)).toBe(false);
    }
    expect(proxyOn('usageStats')).toEqual(new Set(['Query']));
    expect(new Set(CONSUMER_TABLE_CALLS.flatMap((c) => c.actions.map((action) => `${c.table}:${action}`)))).toEqual(
      new Set([
        'usageStats:UpdateItem',
        'accounts:GetItem',
        'accounts:BatchGetItem',
        'accounts:PutItem',
        'accounts:UpdateItem',
      ]),
    );
    // On the accounts table, only the alert store and the spend fold write.
    expect(
      CONSUMER_TABLE_CALLS.filter(
        (c) => c.table === 'accounts' && c.actions.some((a) => a === 'PutItem' || a === 'UpdateItem'),
      ).map((c) => c.code),
    ).toEqual(['DynamoAlertStore', 'WatermarkedCounters', 'DynamoSpendFold']);
  });
});
