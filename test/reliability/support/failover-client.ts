/**
 * A careful client of a streaming chat completion, over plain HTTP as curl would make it: the
 * content deltas joined, the model and usage the chunks named, a malformed chunk skipped, and an
 * in-band error event taken for the error it is (its partial text is never presented as an answer).
 */
import type { ClientView } from './failover-scenarios';

export interface ChatCall {
  url: string;
  token: string;
  model: string;
  prompt: string;
  headers?: Record<string, string>;
  stream?: boolean;
  /** Past this the call is abandoned and counted as a hang. */
  maxWallS: number;
}

export async function chatCall(call: ChatCall): Promise<ClientView> {
  const started = performance.now();
  const elapsedS = () => (performance.now() - started) / 1000;
  const hangGuard = new AbortController();
  const timer = setTimeout(() => hangGuard.abort(), (call.maxWallS + 1) * 1000);
  const stream = call.stream ?? true;
  try {
    const response = await fetch(call.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${call.token}`, 'content-type': 'application/json', ...call.headers },
      body: JSON.stringify({
        model: call.model,
        messages: [{ role: 'user', content: call.prompt }],
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
      signal: hangGuard.signal,
    });
    const text = stream && response.ok ? await readEvents(response) : await response.text();
    if (!response.ok)
      return { outcome: 'error', content: '', error: `HTTP ${response.status}: ${text}`, elapsedS: elapsedS() };
    if (!stream) {
      const body = JSON.parse(text as string) as {
        model?: string;
        usage?: unknown;
        choices?: Array<{ message?: { content?: string } }>;
      };
      return {
        outcome: 'success',
        content: body.choices?.[0]?.message?.content ?? '',
        reportedModel: body.model,
        usage: body.usage,
        elapsedS: elapsedS(),
      };
    }
    return { ...(text as Omit<ClientView, 'elapsedS'>), elapsedS: elapsedS() };
  } catch (error) {
    if (hangGuard.signal.aborted)
      return { outcome: 'hang', content: '', error: 'no result in time', elapsedS: elapsedS() };
    return { outcome: 'error', content: '', error: String(error), elapsedS: elapsedS() };
  } finally {
    clearTimeout(timer);
  }
}

async function readEvents(response: Response): Promise<Omit<ClientView, 'elapsedS'>> {
  const parts: string[] = [];
  let model: string | undefined;
  let usage: unknown;
  let buffered = '';
  const decoder = new TextDecoder();
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).trimEnd();
      buffered = buffered.slice(end + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        await reader.cancel();
        return { outcome: 'success', content: parts.join(''), reportedModel: model, usage };
      }
      let event: {
        error?: { message?: string };
        model?: string;
        usage?: unknown;
        choices?: Array<{ delta?: { content?: string } }>;
      };
      try {
        event = JSON.parse(data) as typeof event;
      } catch {
        continue;
      }
      if (event.error)
        return {
          outcome: 'error',
          content: parts.join(''),
          error: `in-band error: ${event.error.message}`,
          reportedModel: model,
        };
      model = event.model ?? model;
      if (event.usage) usage = event.usage;
      for (const choice of event.choices ?? []) if (choice.delta?.content) parts.push(choice.delta.content);
    }
  }
  return { outcome: 'success', content: parts.join(''), reportedModel: model, usage };
}
