import { backoffs, jitteredBackoff } from '../base/retry';
import type { KeyMark, KeyVersion } from './ports';

/** The longest a key rests after a 429, whatever its `Retry-After` asks. */
export const MAX_COOL_DOWN_MS = 3_600_000;
const MAX_NOTES = 10_000;

/** A key as the choice sees it: its place in the pool and the mark it carries now. */
export interface KeyInPool {
  label: string;
  mark?: KeyMark;
}

const usableAt = (mark: KeyMark | undefined, now: number) => !mark || (mark.state === 'cooling' && mark.until <= now);

/**
 * Which key of a pool to send now (docs/fallbacks.md, "Key pools"): the first usable one, in pool
 * order, that this request has not already set aside; else a usable one it has (a cool-down that
 * has passed meanwhile); else the one whose cool-down ends first; else the first failing one, so
 * the client gets the provider's own answer rather than one the proxy made up.
 */
export function chooseKey<K extends KeyInPool>(keys: readonly K[], setAside: ReadonlySet<string>, now: number): K {
  const usable = keys.filter((key) => usableAt(key.mark, now));
  const fresh = usable.find((key) => !setAside.has(key.label));
  if (fresh) return fresh;
  if (usable.length) return usable[0];
  const cooling = keys.filter((key) => key.mark?.state === 'cooling');
  if (cooling.length) return cooling.reduce((soonest, key) => (untilOf(key) < untilOf(soonest) ? key : soonest));
  return keys[0];
}

const untilOf = (key: KeyInPool) => (key.mark?.state === 'cooling' ? key.mark.until : Infinity);

/** Whether a key this request has not set aside is usable now: the next attempt may then go at once. */
export const anotherUsable = (keys: readonly KeyInPool[], setAside: ReadonlySet<string>, now: number) =>
  keys.some((key) => !setAside.has(key.label) && usableAt(key.mark, now));

/** The stronger of two marks: failing over cooling, the later cool-down over the earlier. */
function stronger(a: KeyMark | undefined, b: KeyMark | undefined): KeyMark | undefined {
  if (!a || !b) return a ?? b;
  if (a.state === 'failing') return a;
  if (b.state === 'failing') return b;
  return a.until >= b.until ? a : b;
}

/**
 * This instance's own view of its keys' health: a key's 429 or 401/403 applies here at once, for
 * every request, before the store has the mark (written in the background, key-rotation.ts) and
 * other instances read it with their pool. A note is for one version of a key: re-saved, it starts clean.
 */
export class KeyHealth {
  private readonly notes = new Map<string, { version: string; mark: KeyMark; streak: number }>();
  private readonly coolDown: (streak: number) => number;

  constructor(
    private readonly now: () => number,
    random: () => number = Math.random,
  ) {
    this.coolDown = jitteredBackoff(backoffs.keyCoolDown, random);
  }

  /** The key's mark now: its stored one or this instance's note, whichever is stronger. */
  markOf(accountId: string, key: KeyVersion & { mark?: KeyMark }): KeyMark | undefined {
    const note = this.notes.get(noteId(accountId, key));
    return stronger(key.mark, note?.version === key.updatedAt ? note.mark : undefined);
  }

  /**
   * What the provider answered with this key. A 429 rests it for `retryAfterMs` (or a jittered
   * backoff, longer with each 429 in a row); a 401 or 403 marks it failing. Returns the mark for
   * the store when the answer set the key aside.
   */
  answered(accountId: string, key: KeyVersion, status: number, retryAfterMs: number | undefined): KeyMark | undefined {
    const id = noteId(accountId, key);
    const before = this.notes.get(id);
    const same = before?.version === key.updatedAt ? before : undefined;
    const streak = same ? same.streak + 1 : 1;
    let mark: KeyMark;
    if (status === 401 || status === 403) mark = { state: 'failing' };
    else if (status === 429)
      mark = {
        state: 'cooling',
        until: this.now() + Math.min(MAX_COOL_DOWN_MS, retryAfterMs ?? this.coolDown(streak)),
      };
    else {
      // An answer ends a run of 429s; a key marked failing stays so until saved again.
      if (same?.mark.state === 'cooling' && status < 400) this.notes.delete(id);
      return undefined;
    }
    if (this.notes.size >= MAX_NOTES) this.notes.clear();
    this.notes.set(id, { version: key.updatedAt, mark: stronger(mark, same?.mark) ?? mark, streak });
    return mark;
  }
}

const noteId = (accountId: string, key: Pick<KeyVersion, 'provider' | 'label'>) =>
  `${accountId}\u0000${key.provider}\u0000${key.label}`;
