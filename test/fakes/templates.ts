/**
 * Turns a fixture into a response template, compiled once per shape: the fixture's events serialised
 * to bytes with holes where the requested model and (optionally) usage numbers go. Serving a request
 * then only fills a few holes, so the fake stays cheap under load.
 */
import type { Usage } from '../../lambda/providers/usage';
import { expectedUsage, fixtureText, isStreamFixture, splitSseBlocks } from '../fixtures/index';

export type Hole = 'model' | 'in' | 'rawIn' | 'out' | 'total' | 'cacheRead' | 'cacheWrite' | 'cacheMiss' | 'zero';

/** Bytes of one SSE block (or the whole JSON body), split around its holes: parts.length === holes.length + 1. */
export interface CompiledEvent {
  parts: Buffer[];
  holes: Hole[];
}

export interface TemplateShape {
  fixture: string;
  /** Drop stream usage (a when-asked provider that was not asked). */
  stripStreamUsage: boolean;
  /** Put holes where usage numbers go, to serve usage other than the fixture's. */
  usageHoles: boolean;
  /** Replace the content deltas (or the JSON answer's text) with this many pieces. */
  chunks?: number;
  /** Pad the content to about this many bytes. */
  hugeBytes?: number;
}

export interface Template {
  stream: boolean;
  status: number;
  events: CompiledEvent[];
  /** Usage numbers are holes, filled per request. */
  usageHoles: boolean;
  /** The body carries usage at all (false once a when-asked provider's stream usage is stripped). */
  reportsUsage: boolean;
  /** The fixture's own usage as served (zero when it carries none). */
  fixtureUsage: Usage;
  /** Which usage fields the fixture's shape can express (others are served as 0). */
  canReportCacheRead: boolean;
  canReportCacheWrite: boolean;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const holeMarker = (hole: Hole) => `@@hole:${hole}@@`;
const HOLE_PATTERN = /"@@hole:(\w+)@@"/;
const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
const HUGE_PIECE_BYTES = 16_384;
const VOCABULARY = ['The', ' proxy', ' passes', ' each', ' chunk', ' through', ' as', ' it', ' arrives', '.'];

const cache = new Map<string, Template>();

export function compileTemplate(shape: TemplateShape): Template {
  const key = JSON.stringify(shape);
  let template = cache.get(key);
  if (!template) {
    template = build(shape);
    cache.set(key, template);
  }
  return template;
}

function contentPieces(shape: TemplateShape): string[] | undefined {
  if (shape.hugeBytes !== undefined) {
    const count = Math.max(1, Math.ceil(shape.hugeBytes / HUGE_PIECE_BYTES));
    return Array.from({ length: count }, (_, i) => `${i % 10}`.repeat(HUGE_PIECE_BYTES));
  }
  if (shape.chunks !== undefined)
    return Array.from({ length: shape.chunks }, (_, i) => VOCABULARY[i % VOCABULARY.length]!);
  return undefined;
}

function build(shape: TemplateShape): Template {
  const text = fixtureText(shape.fixture);
  const expected = expectedUsage(shape.fixture);
  const stream = isStreamFixture(shape.fixture);
  const pieces = contentPieces(shape);
  const flags = { cacheRead: false, cacheWrite: false, usage: false };

  let events: CompiledEvent[];
  if (stream) {
    let blocks: Block[] = splitSseBlocks(text).map((block) => ({
      name: block.event,
      data: block.data === '[DONE]' ? block.data : (JSON.parse(block.data) as unknown),
    }));
    if (shape.stripStreamUsage) {
      blocks = blocks.filter((block) => !isUsageOnlyChunk(block.data));
      for (const block of blocks) if (isObject(block.data)) delete block.data.usage;
    }
    if (pieces) blocks = replaceContentEvents(blocks, pieces);
    events = blocks.map((block) => {
      if (isObject(block.data)) markHoles(block.data, shape.usageHoles, flags);
      const data = typeof block.data === 'string' ? block.data : JSON.stringify(block.data);
      return compile(`${block.name === undefined ? '' : `event: ${block.name}\n`}data: ${data}\n\n`);
    });
  } else {
    const body = JSON.parse(text) as unknown;
    if (isObject(body)) {
      if (pieces) setJsonAnswer(body, pieces.join(''));
      markHoles(body, shape.usageHoles, flags);
    }
    const indent = text.includes('\n  ') ? 2 : undefined;
    events = [compile(JSON.stringify(body, null, indent) + (text.endsWith('\n') ? '\n' : ''))];
  }

  return {
    stream,
    status: expected.status,
    events,
    usageHoles: shape.usageHoles,
    reportsUsage: flags.usage,
    fixtureUsage: flags.usage && expected.status < 400 ? pick(expected) : ZERO_USAGE,
    canReportCacheRead: flags.cacheRead,
    canReportCacheWrite: flags.cacheWrite,
  };
}

const pick = (usage: Usage): Usage => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  cacheReadTokens: usage.cacheReadTokens,
  cacheWriteTokens: usage.cacheWriteTokens,
});

function isUsageOnlyChunk(data: unknown): boolean {
  return isObject(data) && Array.isArray(data.choices) && data.choices.length === 0 && isObject(data.usage);
}

type Block = { name: string | undefined; data: unknown };

function isContentEvent(data: unknown): boolean {
  if (!isObject(data)) return false;
  if (data.type === 'content_block_delta') return isObject(data.delta) && data.delta.type === 'text_delta';
  const choice = Array.isArray(data.choices) ? (data.choices[0] as unknown) : undefined;
  return (
    isObject(choice) &&
    !choice.finish_reason &&
    isObject(choice.delta) &&
    typeof choice.delta.content === 'string' &&
    choice.delta.content !== ''
  );
}

/** Replaces the run of content deltas with one clone of the first per piece. */
function replaceContentEvents(blocks: Block[], pieces: string[]): Block[] {
  const first = blocks.findIndex((block) => isContentEvent(block.data));
  if (first < 0) return blocks;
  const model = JSON.stringify(blocks[first]!.data);
  const clones = pieces.map((piece) => {
    const data = JSON.parse(model) as Json;
    if (data.type === 'content_block_delta') (data.delta as Json).text = piece;
    else ((data.choices as Json[])[0]!.delta as Json).content = piece;
    return { ...blocks[first]!, data };
  });
  const rest = blocks.filter((block) => !isContentEvent(block.data));
  rest.splice(first, 0, ...clones);
  return rest;
}

function setJsonAnswer(body: Json, answer: string): void {
  if (Array.isArray(body.content)) {
    const block = (body.content as unknown[]).find((part) => isObject(part) && part.type === 'text');
    if (isObject(block)) block.text = answer;
  } else if (Array.isArray(body.choices) && isObject(body.choices[0]) && isObject(body.choices[0].message)) {
    body.choices[0].message.content = answer;
  }
}

/** Puts the model hole, and usage holes if asked, wherever the two dialects carry them. */
function markHoles(
  data: Json,
  usageHoles: boolean,
  flags: { cacheRead: boolean; cacheWrite: boolean; usage: boolean },
): void {
  const message = isObject(data.message) ? data.message : undefined;
  for (const holder of [data, message])
    if (holder && typeof holder.model === 'string') holder.model = holeMarker('model');

  const usages: Array<[Json, boolean]> = [];
  if (isObject(data.usage)) usages.push([data.usage, false]);
  if (message && isObject(message.usage)) usages.push([message.usage, data.type === 'message_start']);
  if (isObject(data.x_groq) && isObject(data.x_groq.usage)) usages.push([data.x_groq.usage, false]);
  for (const [usage, isStart] of usages) {
    flags.usage = true;
    if ('cache_read_input_tokens' in usage || 'prompt_cache_hit_tokens' in usage) flags.cacheRead = true;
    if (isObject(usage.prompt_tokens_details) && 'cached_tokens' in usage.prompt_tokens_details) flags.cacheRead = true;
    if ('cache_creation_input_tokens' in usage) flags.cacheWrite = true;
    if (usageHoles) setUsageHoles(usage, isStart);
  }
}

function setUsageHoles(usage: Json, isMessageStart: boolean): void {
  const set = (holder: Json, field: string, hole: Hole) => {
    if (field in holder) holder[field] = holeMarker(hole);
  };
  // messages dialect
  set(usage, 'input_tokens', 'rawIn');
  set(usage, 'cache_creation_input_tokens', 'cacheWrite');
  set(usage, 'cache_read_input_tokens', 'cacheRead');
  // message_start's output count is the provider's opening figure; the final count comes in message_delta.
  if (!isMessageStart) set(usage, 'output_tokens', 'out');
  if (isObject(usage.cache_creation)) {
    set(usage.cache_creation, 'ephemeral_5m_input_tokens', 'cacheWrite');
    set(usage.cache_creation, 'ephemeral_1h_input_tokens', 'zero');
  }
  // chat-completions dialect
  set(usage, 'prompt_tokens', 'in');
  set(usage, 'completion_tokens', 'out');
  set(usage, 'total_tokens', 'total');
  set(usage, 'prompt_cache_hit_tokens', 'cacheRead');
  set(usage, 'prompt_cache_miss_tokens', 'cacheMiss');
  if (isObject(usage.prompt_tokens_details)) {
    set(usage.prompt_tokens_details, 'cached_tokens', 'cacheRead');
    set(usage.prompt_tokens_details, 'text_tokens', 'in');
  }
  if (isObject(usage.completion_tokens_details)) set(usage.completion_tokens_details, 'reasoning_tokens', 'zero');
}

function compile(text: string): CompiledEvent {
  const pieces = text.split(HOLE_PATTERN);
  const parts: Buffer[] = [];
  const holes: Hole[] = [];
  pieces.forEach((piece, i) => (i % 2 === 0 ? parts.push(Buffer.from(piece)) : holes.push(piece as Hole)));
  return { parts, holes };
}

/** The usage a response built from this template reports, given the usage wanted for it. */
export function servedUsage(template: Template, wanted: Usage): Usage {
  if (!template.usageHoles) return template.fixtureUsage;
  if (!template.reportsUsage) return ZERO_USAGE;
  // Fields the fixture's shape cannot carry are served as 0.
  const cacheReadTokens = template.canReportCacheRead ? wanted.cacheReadTokens : 0;
  const cacheWriteTokens = template.canReportCacheWrite ? wanted.cacheWriteTokens : 0;
  return {
    inputTokens: Math.max(wanted.inputTokens, cacheReadTokens + cacheWriteTokens),
    outputTokens: wanted.outputTokens,
    cacheReadTokens,
    cacheWriteTokens,
  };
}

/** Fills an event's holes. `usage` must be what `servedUsage` returned. */
export function renderEvent(event: CompiledEvent, modelJson: string, usage: Usage | undefined): Buffer {
  if (event.holes.length === 0) return event.parts[0]!;
  const chunks: Buffer[] = [event.parts[0]!];
  event.holes.forEach((hole, i) => {
    chunks.push(Buffer.from(holeValue(hole, modelJson, usage)), event.parts[i + 1]!);
  });
  return Buffer.concat(chunks);
}

function holeValue(hole: Hole, modelJson: string, usage: Usage | undefined): string {
  if (hole === 'model') return modelJson;
  const u = usage ?? ZERO_USAGE;
  const values: Record<Exclude<Hole, 'model'>, number> = {
    in: u.inputTokens,
    rawIn: u.inputTokens - u.cacheReadTokens - u.cacheWriteTokens,
    out: u.outputTokens,
    total: u.inputTokens + u.outputTokens,
    cacheRead: u.cacheReadTokens,
    cacheWrite: u.cacheWriteTokens,
    cacheMiss: u.inputTokens - u.cacheReadTokens,
    zero: 0,
  };
  return String(values[hole]);
}
