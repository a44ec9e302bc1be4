import { describe, expect, it } from 'vitest';
import { findFromSearch, inConversation, position, step, withFind } from './find';

describe('find inside a conversation', () => {
  it('keeps the query beside the entry in the URL', () => {
    expect(withFind('', 'g2-5w8b', '537 role:answer')).toBe('?at=g2-5w8b&q=537+role%3Aanswer');
    expect(findFromSearch('?at=g2-5w8b&q=537+role%3Aanswer')).toBe('537 role:answer');
    expect(withFind('?x=1&at=a&q=b', undefined, undefined)).toBe('?x=1');
    expect(findFromSearch('?at=e')).toBeUndefined();
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
