// The server's token in the browser. `folio serve` prints the URL to open
// as http://host:port/#token=…; the fragment never reaches the server or
// its logs. takeToken moves it into the tab's sessionStorage (so a reload
// keeps working, and the token dies with the tab) and takes it out of the
// address bar, so it is not bookmarked, shared or kept in history.

const KEY = 'folio.token';

/** takeToken returns the tab's token: from #token= when present, else the one stored for the tab. */
export function takeToken(loc: Location = location, store: Storage | undefined = globalThis.sessionStorage, hist: History | undefined = globalThis.history): string | undefined {
  const m = /(?:^#|&)token=([^&]*)/.exec(loc.hash);
  if (m) {
    let token: string | undefined;
    try {
      token = decodeURIComponent(m[1]!) || undefined;
    } catch {
      token = undefined;
    }
    try {
      if (token) store?.setItem(KEY, token);
    } catch {
      /* storage refused (private mode): the token lives for this page only */
    }
    const rest = loc.hash.replace(/(^#|&)token=[^&]*&?/, '$1').replace(/&$/, '').replace(/^#$/, '');
    hist?.replaceState(hist.state, '', loc.pathname + loc.search + (rest === '#' ? '' : rest));
    if (token) return token;
  }
  try {
    return store?.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** base64url without padding, as the server decodes the WebSocket token. */
function base64url(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The subprotocol the server selects, which the client must offer. */
export const SUBPROTOCOL = 'folio.v2';

/**
 * wsProtocols are the WebSocket subprotocols to offer: a browser cannot put
 * an Authorization header on an upgrade, so the token travels as the offer
 * "folio-token.<base64url>", next to folio.v2, which the server selects.
 */
export function wsProtocols(token?: string, share?: string): string[] {
  const out = token ? [SUBPROTOCOL, `folio-token.${base64url(token)}`] : [SUBPROTOCOL];
  if (share) out.push(`folio-share.${share}`);
  return out;
}

/**
 * shareFromPath is the token of a share link's address, /s/{token}: the tab
 * then shows that one conversation, read-only. Undefined for any other path.
 */
export function shareFromPath(pathname: string): string | undefined {
  const m = /^\/s\/([A-Za-z0-9_-]{16,128})\/?$/.exec(pathname);
  return m ? m[1] : undefined;
}

/** csrfToken is the signed-in session's CSRF token (the folio_csrf cookie), if any. */
export function csrfToken(cookie: string = typeof document === 'undefined' ? '' : document.cookie): string | undefined {
  const m = /(?:^|;\s*)folio_csrf=([^;]+)/.exec(cookie);
  return m ? m[1] : undefined;
}
