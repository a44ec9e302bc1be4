import { describe, expect, it } from 'vitest';
import { fold, matches, queryMatcher, tokens } from './terms';
import parity from './terms.parity.json';

// terms.parity.json is what the server's own tokens() (search/terms.go)
// answers for each text: written by a Go test calling it, so the app folds
// words exactly as the search does (non-ASCII letters, digits of other
// scripts, combining marks, ligatures, emoji, text with no words at all).
describe('words and their folding, as the server’s search/terms.go', () => {
  it.each(parity.map((r) => [r.in, r.tokens] as const))('%j', (text, want) => {
    expect(tokens(text).map((t) => ({ text: text.slice(t.start, t.end), folded: t.folded }))).toEqual(want);
  });

  it('folds case and diacritics, and leaves letters that have no base letter', () => {
    expect(['Größe', 'ÉCOLE', 'İstanbul', 'Łódź', 'Øre', 'ΣΟΦΊΑ', 'Ёж', 'naïve'].map(fold)).toEqual(['große', 'ecole', 'istanbul', 'łodz', 'øre', 'σοφια', 'еж', 'naive']);
  });

  it('cuts a word at 255 bytes, at a character’s start, as the index does', () => {
    expect(fold('a'.repeat(300))).toHaveLength(255);
    const w = fold('é'.repeat(200) + 'ü');
    expect(w).toBe('e'.repeat(200) + 'u');
    expect(new TextEncoder().encode(fold('ж'.repeat(200))).length).toBe(254);
  });
});

describe('queryMatcher', () => {
  it('looks for the words of terms and phrases, a prefix term’s last word as a prefix; not for filters or excluded terms', () => {
    const m = queryMatcher('Café "Crème brûlée" fold* -secret -"not this" role:answer conversation:big after:2026-01-01 "x-ray fold"* http://example.org');
    expect([...m.words].sort()).toEqual(['cafe', 'creme', 'brulee', 'x', 'ray', 'http', 'example', 'org'].sort());
    expect(m.prefixes).toEqual(['fold', 'fold']);
    expect(matches(m, 'folding')).toBe(true);
    expect(matches(m, 'cafe')).toBe(true);
    expect(matches(m, 'secret')).toBe(false);
    expect(matches(m, 'answer')).toBe(false);
    expect(matches(m, 'caf')).toBe(false);
  });

  it('never refuses: an unclosed quote runs to the end; extra words (a snippet’s marks) are added', () => {
    const m = queryMatcher('"open quote', ['Straße', 'ÜBER']);
    expect([...m.words].sort()).toEqual(['open', 'quote', 'straße', 'uber'].sort());
  });
});
