import { Readable } from 'node:stream';
import { ChatSplice, DeliveredText } from '../../../lambda/streaming/chat-splice';
import { RelayCut } from '../../../lambda/streaming/relay';
import { appendToArrayMember, setMember } from '../../../lambda/providers/dialects/json-splice';

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const words = (...parts: string[]) => parts.map((content) => chunk({ content })).join('');
const ending = `${chunk({}, 'stop')}data: [DONE]\n\n`;

async function spliced(splice: ChatSplice, input: string): Promise<{ out: string; error?: Error }> {
  let out = '';
  try {
    for await (const piece of Readable.from([Buffer.from(input)]).pipe(splice)) out += String(piece);
  } catch (error) {
    return { out, error: error as Error };
  }
  return { out };
}

const contentOf = (sse: string) => {
  const text = new DeliveredText();
  text.append(sse);
  return text.text;
};

describe('DeliveredText', () => {
  it('joins the content of whole events only', () => {
    const text = new DeliveredText();
    text.append(chunk({ role: 'assistant', content: '' }) + words('Hello', ' wor'));
    text.append('data: {"choices":[{"delta":{"content":"ld"');
    expect(text.text).toBe('Hello wor');
  });
});

describe('ChatSplice', () => {
  it('a continuation: its role chunk dropped, the rest as sent', async () => {
    const input = chunk({ role: 'assistant', content: '' }) + words(' there', '!') + ending;
    const { out } = await spliced(new ChatSplice(''), input);
    expect(out).toBe(words(' there', '!') + ending);
  });

  it('a restart that begins with what was sent: that part dropped, the event across the join cut', async () => {
    const input = chunk({ role: 'assistant', content: '' }) + words('Hel', 'lo wo', 'rld') + ending;
    const { out, error } = await spliced(new ChatSplice('Hello w'), input);
    expect(error).toBeUndefined();
    expect(contentOf(out)).toBe('orld');
    expect(out.endsWith(ending)).toBe(true);
  });

  it('a restart that says something else, or less: a RelayCut with the message given, nothing after', async () => {
    const other = await spliced(new ChatSplice('Hello', 'cut; could not continue'), words('Help', ' me') + ending);
    expect(other.error).toBeInstanceOf(RelayCut);
    expect(other.error?.message).toBe('cut; could not continue');
    expect(contentOf(other.out)).toBe('');
    const shorter = await spliced(new ChatSplice('Hello world'), words('Hello') + ending);
    expect(shorter.error).toBeInstanceOf(RelayCut);
    expect(shorter.out).not.toContain('[DONE]');
  });
});

describe('json-splice: setMember and appendToArrayMember', () => {
  it('edit one member, every other byte as written', () => {
    const body = Buffer.from('{"model":"a", "n": 1.0, "messages":[{"role":"user","content":"hi"}]}');
    expect(setMember(body, 'model', '"b"').toString()).toBe(
      '{"model":"b", "n": 1.0, "messages":[{"role":"user","content":"hi"}]}',
    );
    expect(setMember(Buffer.from('{}'), 'model', '"b"').toString()).toBe('{"model":"b"}');
    expect(appendToArrayMember(body, 'messages', '{"role":"assistant","content":"x"}').toString()).toBe(
      '{"model":"a", "n": 1.0, "messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"}]}',
    );
    expect(appendToArrayMember(Buffer.from('{"messages": [ ]}'), 'messages', '1').toString()).toBe(
      '{"messages": [ 1]}',
    );
  });
});
