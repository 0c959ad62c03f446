import { isCacheableStatus, type CachedResponseMeta } from '../response-cache';
import { tokenCount } from '../../providers/usage';

/**
 * The head record of a stored entry, as a store adapter writes it: what the
 * response was, and what its body must look like (generation of its parts,
 * part count, byte count, SHA-256). A reader trusts a body only when all of it matches.
 */
export interface EntryHead {
  /** Random per write: only parts of this generation belong to the entry. */
  gen: number;
  /** Number of part records; 0 means the body is inline. */
  parts: number;
  bytes: number;
  sha256: string;
  inline?: Uint8Array;
  /** Epoch seconds. */
  expiresAt: number;
  meta: CachedResponseMeta;
}

/** The head's sort key; parts use positive numbers. */
export const HEAD_PART = 0;

type StoredItem = Record<string, unknown>;

export function headItem(key: string, head: EntryHead): StoredItem {
  const { meta } = head;
  return {
    cache_key: key,
    part: HEAD_PART,
    gen: head.gen,
    parts: head.parts,
    bytes: head.bytes,
    sha256: head.sha256,
    ...(head.inline?.length ? { data: head.inline } : {}),
    expires_at: head.expiresAt,
    format: meta.format,
    status: meta.status,
    content_type: meta.contentType,
    ...(meta.model !== undefined ? { model: meta.model } : {}),
    usage: { ...meta.usage },
    cost_nanos: meta.costNanos,
    stored_at: meta.storedAt,
  };
}

/** The head as stored, or undefined when anything about it is off: a corrupt head is a miss, never an answer. */
export function parseHead(item: StoredItem | undefined): EntryHead | undefined {
  if (!item || item.part !== HEAD_PART) return undefined;
  const {
    gen,
    parts,
    bytes,
    sha256,
    data,
    expires_at,
    format,
    status,
    content_type,
    model,
    usage,
    cost_nanos,
    stored_at,
  } = item;
  if (
    !isCount(gen) ||
    !isCount(parts) ||
    !isCount(bytes) ||
    typeof sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(sha256)
  )
    return undefined;
  if (
    typeof expires_at !== 'number' ||
    (format !== 'json' && format !== 'sse' && format !== 'eventstream') ||
    typeof status !== 'number' ||
    !isCacheableStatus(status)
  )
    return undefined;
  if (typeof content_type !== 'string' || typeof cost_nanos !== 'number' || typeof stored_at !== 'number')
    return undefined;
  if (usage === null || typeof usage !== 'object' || (model !== undefined && typeof model !== 'string'))
    return undefined;
  if (data !== undefined && !(data instanceof Uint8Array)) return undefined;
  const u = usage as StoredItem;
  return {
    gen,
    parts,
    bytes,
    sha256,
    inline: data,
    expiresAt: expires_at,
    meta: {
      format,
      status,
      contentType: content_type,
      ...(model !== undefined ? { model } : {}),
      usage: {
        inputTokens: tokenCount(u.inputTokens),
        outputTokens: tokenCount(u.outputTokens),
        cacheReadTokens: tokenCount(u.cacheReadTokens),
        cacheWriteTokens: tokenCount(u.cacheWriteTokens),
      },
      costNanos: cost_nanos,
      storedAt: stored_at,
    },
  };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
