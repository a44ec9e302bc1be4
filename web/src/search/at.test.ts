import { describe, expect, it } from 'vitest';
import { atFromSearch, withAt } from './at';

describe('the ?at= of a conversation URL', () => {
  it('reads the entry', () => {
    expect(atFromSearch('?at=g1-2045')).toBe('g1-2045');
    expect(atFromSearch('?token=x&at=a%2Fb')).toBe('a/b');
    expect(atFromSearch('')).toBeUndefined();
    expect(atFromSearch('?at=')).toBeUndefined();
  });
  it('sets and removes it, keeping the rest', () => {
    expect(withAt('', 'e1')).toBe('?at=e1');
    expect(withAt('?x=1&at=old', 'new')).toBe('?x=1&at=new');
    expect(withAt('?x=1&at=old', undefined)).toBe('?x=1');
    expect(withAt('?at=old', undefined)).toBe('');
  });
});
