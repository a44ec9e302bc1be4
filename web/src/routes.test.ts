import { describe, expect, it } from 'vitest';
import { appRoot, conversationFromPath, pathFor } from './routes';

describe('routes', () => {
  it('finds the root and the conversation of a path', () => {
    expect(appRoot('/')).toBe('/');
    expect(appRoot('/c/abc')).toBe('/');
    expect(appRoot('/folio/c/abc')).toBe('/folio/');
    expect(appRoot('/folio/')).toBe('/folio/');
    expect(conversationFromPath('/c/abc')).toBe('abc');
    expect(conversationFromPath('/folio/c/conv.v2')).toBe('conv.v2');
    expect(conversationFromPath('/')).toBeUndefined();
    expect(conversationFromPath('/c/%E0%A4%A')).toBeUndefined();
  });
  it('builds paths that read back', () => {
    expect(pathFor('/', 'a b')).toBe('/c/a%20b');
    expect(conversationFromPath(pathFor('/x/', 'a b'))).toBe('a b');
    expect(pathFor('/x/', undefined)).toBe('/x/');
  });
});
