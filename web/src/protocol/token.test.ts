// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from 'vitest';
import { csrfToken, shareFromPath, takeToken, wsProtocols } from './token';

describe('takeToken', () => {
  beforeEach(() => {
    sessionStorage.clear();
    history.replaceState(null, '', '/');
  });

  it('moves #token= into session storage and out of the address bar', () => {
    history.replaceState(null, '', '/?x=1#token=abc%2Bdef-0123456789');
    expect(takeToken()).toBe('abc+def-0123456789');
    expect(location.hash).toBe('');
    expect(location.search).toBe('?x=1');
    expect(sessionStorage.getItem('folio.token')).toBe('abc+def-0123456789');
    // A reload: no fragment any more, the tab's storage still has it.
    expect(takeToken()).toBe('abc+def-0123456789');
  });

  it('keeps the rest of the fragment', () => {
    history.replaceState(null, '', '/#a=1&token=t0123456789abcdef');
    expect(takeToken()).toBe('t0123456789abcdef');
    expect(location.hash).toBe('#a=1');
    history.replaceState(null, '', '/#token=t2&b=2');
    expect(takeToken()).toBe('t2');
    expect(location.hash).toBe('#b=2');
  });

  it('has nothing without a fragment or storage', () => {
    expect(takeToken()).toBeUndefined();
  });
});

describe('wsProtocols', () => {
  it('offers folio.v2 and the token as base64url', () => {
    expect(wsProtocols()).toEqual(['folio.v2']);
    const [v, t] = wsProtocols('a+b/c=?é');
    expect(v).toBe('folio.v2');
    expect(t).toMatch(/^folio-token\.[A-Za-z0-9_-]+$/);
    const b64 = t!.slice('folio-token.'.length).replace(/-/g, '+').replace(/_/g, '/');
    expect(new TextDecoder().decode(Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0)))).toBe('a+b/c=?é');
  });
});

describe('share links and sessions', () => {
  it('reads a share token from /s/{token} only', () => {
    const tok = 'Zm9saW8tc2hhcmUtdG9rZW4tMDEyMzQ1Njc4OWFiY2RlZg';
    expect(shareFromPath(`/s/${tok}`)).toBe(tok);
    expect(shareFromPath('/c/c-12345678')).toBeUndefined();
    expect(shareFromPath('/s/short')).toBeUndefined();
    expect(shareFromPath(`/s/${tok}/x`)).toBeUndefined();
    expect(wsProtocols(undefined, tok)).toEqual(['folio.v2', `folio-share.${tok}`]);
  });

  it('reads the CSRF token from the folio_csrf cookie', () => {
    expect(csrfToken('a=1; folio_csrf=abc123; b=2')).toBe('abc123');
    expect(csrfToken('folio_session=x')).toBeUndefined();
  });
});
