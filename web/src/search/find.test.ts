import { describe, expect, it } from 'vitest';
import { findFromState, inConversation, position, step } from './find';

describe('find inside a conversation', () => {
  it('reads the query a history entry keeps', () => {
    expect(findFromState({ find: '537 role:answer' })).toBe('537 role:answer');
    expect(findFromState({ find: '' })).toBe('');
    expect(findFromState(null)).toBeUndefined();
    expect(findFromState({ find: 3 })).toBeUndefined();
  });
  it('narrows the query to the conversation, replacing any conversation filter', () => {
    expect(inConversation('fsync "dry run" role:prompt', 'big')).toBe('fsync "dry run" role:prompt conversation:big');
    expect(inConversation('why conversation:other conv:x in:y', 'big')).toBe('why conversation:big');
    expect(inConversation('"conversation:kept as words" x', 'c')).toBe('"conversation:kept as words" x conversation:c');
  });
  it('steps from hit to hit, newest first, stopping at either end', () => {
    const s = { hits: ['e9', 'e5', 'e1'], more: false };
    expect(position(s, 'e5')).toBe(1);
    expect(step(s, 'e9', 1)).toBe('e5');
    expect(step(s, 'e5', 1)).toBe('e1');
    expect(step(s, 'e1', 1)).toBeUndefined();
    expect(step(s, 'e5', -1)).toBe('e9');
    expect(step(s, 'e9', -1)).toBeUndefined();
    // From an entry that is not a hit: older starts at the newest.
    expect(step(s, 'x', 1)).toBe('e9');
    expect(step(s, undefined, -1)).toBe('e1');
    expect(step({ hits: [], more: false }, 'e1', 1)).toBeUndefined();
  });
});

describe('the chat row that shows an entry', () => {
  it('is the prompt itself, or the reply whose segments or steps hold it', async () => {
    const { holds } = await import('../chat/rows');
    const reply = {
      id: 'a0',
      role: 'assistant' as const,
      state: 'completed' as const,
      segments: [
        { kind: 'steps' as const, id: 'steps-t1', steps: [{ kind: 'thinking' as const, id: 't1', label: '', text: 'x' }] },
        { kind: 'text' as const, id: 'a1', markdown: 'the answer' },
        { kind: 'notice' as const, id: 'n1', text: 'note', tone: 'info' },
      ],
      failure: { reason: 'rate_limit', id: 'f1' },
    };
    expect(holds({ id: 'u1', role: 'user', text: 'q' }, 'u1')).toBe(true);
    expect(holds({ id: 'u1', role: 'user', text: 'q' }, 'a1')).toBe(false);
    for (const e of ['a0', 't1', 'a1', 'n1', 'f1']) expect(holds(reply, e)).toBe(true);
    expect(holds(reply, 'u1')).toBe(false);
  });
});
