/**
 * Everything the server returned during a test file (status line, headers,
 * body), kept so a final test can scan it for secrets, and plain readers of
 * the DynamoDB tables (items rendered to text, binary attributes included).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { tableNames } from '../../../lambda/store/tables';
import { sdkDocumentClient } from '../../reliability/support/dynamo';

export class Observed {
  private readonly seen: string[] = [];

  /** `fetch`, remembering what came back. */
  fetch = async (url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; text: string }> => {
    const response = await fetch(url, init);
    const text = await response.text();
    this.seen.push(
      `${init?.method ?? 'GET'} ${url} -> ${response.status}\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${text}`,
    );
    return { status: response.status, headers: response.headers, text };
  };

  record(text: string): void {
    this.seen.push(text);
  }

  get count(): number {
    return this.seen.length;
  }

  /** The secrets that appear somewhere in what was seen, each with where. */
  leaks(secrets: Iterable<string>): Array<{ secret: string; where: string }> {
    const found: Array<{ secret: string; where: string }> = [];
    for (const secret of secrets) {
      const hit = this.seen.find((entry) => entry.includes(secret));
      if (hit) found.push({ secret: `${secret.slice(0, 12)}…`, where: hit.split('\n')[0]! });
    }
    return found;
  }
}

/** The secret part of a proxy token (`sk-proxy-<account>_<key>_<secret>`). */
export const tokenSecret = (token: string) => token.split('_').at(-1)!;

/** Every item of every table of a server (by its table prefix), as text: strings as is, binary as UTF-8, Latin-1 and base64. */
export async function tableText(tablePrefix: string): Promise<Record<string, string[]>> {
  const doc = sdkDocumentClient();
  const out: Record<string, string[]> = {};
  for (const [id, table] of Object.entries(tableNames({}, tablePrefix))) {
    const items: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) items.push(render(item));
      start = page.LastEvaluatedKey;
    } while (start);
    out[id] = items;
  }
  return out;
}

function render(value: unknown): string {
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value);
    return `${bytes.toString('utf8')} ${bytes.toString('latin1')} ${bytes.toString('base64')}`;
  }
  if (value instanceof Set) return [...value].map(render).join(' ');
  if (Array.isArray(value)) return value.map(render).join(' ');
  if (value && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k}=${render(v)}`)
      .join(' ');
  return String(value);
}

export async function rawAccountItems(tablePrefix: string): Promise<Array<Record<string, unknown>>> {
  const doc = sdkDocumentClient();
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({ TableName: tableNames({}, tablePrefix).accounts, ExclusiveStartKey: start }),
    );
    items.push(...((page.Items ?? []) as Array<Record<string, unknown>>));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
