import { Moon, Sun } from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ViewCache } from './chat/cache';
import type { ConversationMeta } from './chat/types';
import { TranscriptView } from './chat/view';
import { ChatPane } from './components/ChatPane';
import { ConversationList } from './components/ConversationList';
import { RefusalNotice, TokenPage } from './components/Refusal';
import type { Refusal } from './protocol/errors';
import { catalogs, LocaleContext, pickLocale } from './i18n/catalog';
import { HttpError, httpApi } from './protocol/api';
import { Client, wsURL } from './protocol/client';
import { shareFromPath, takeToken, wsProtocols } from './protocol/token';
import { appRoot, conversationFromPath, pathFor } from './routes';
import { atFromSearch, withAt } from './search/at';
import { FindBar } from './search/FindBar';
import { findFromState } from './search/find';
import { holds } from './chat/rows';
import { markHit, SearchPanel } from './search/SearchPanel';
import { queryMatcher } from './search/terms';
import { applyTheme, initialTheme, type Theme } from './theme';

interface Pane {
  conversation?: string;
  head?: string;
}

/**
 * App owns the tab's protocol client, the view cache (four conversations),
 * the conversation list and up to two panes. The first pane's conversation is
 * the URL's: c/{id} opens it, and back and forward move between
 * conversations (History API).
 */
export function App() {
  const token = useMemo(() => takeToken(), []);
  // A share link's address (/s/{token}) shows its one conversation, read-only.
  const share = useMemo(() => shareFromPath(location.pathname), []);
  // A session that ends while the app is open (signed out in another tab,
  // expired) closes the connection; the app then signs in again, as a
  // refused request does.
  const ended = useRef<(reason: string) => void>(() => undefined);
  const client = useMemo(
    () =>
      new Client({
        url: wsURL(location),
        protocols: wsProtocols(token, share),
        onEnded: (_status, reason) => ended.current(reason),
      }),
    [token, share],
  );
  const api = useMemo(() => httpApi(token, undefined, share), [token, share]);
  const cache = useMemo(() => new ViewCache<TranscriptView>((key) => {
    const [conv, head] = key.split('|');
    return new TranscriptView(client, conv!, head || undefined);
  }), [client]);
  const [conversations, setConversations] = useState<ConversationMeta[]>([]);
  const root = useMemo(() => appRoot(location.pathname), []);
  const [panes, setPanes] = useState<Pane[]>(() => [{ conversation: conversationFromPath(location.pathname) }]);
  // The message that starts a new conversation, sent once its pane shows it.
  const [first, setFirst] = useState<{ id: string; text: string; files: File[]; model?: string } | undefined>();
  // The server refused the tab's token (none, or one of an earlier run):
  // the app is replaced by the page that says where the address comes from.
  const [unauthorized, setUnauthorized] = useState(false);
  // A refused list action (rename, delete, create), shown until dismissed.
  const [notice, setNotice] = useState<Refusal | undefined>();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [listOpen, setListOpen] = useState(false);
  // The entry a search hit opened the first pane at (?at= in the URL).
  const [at, setAt] = useState(() => atFromSearch(location.search));
  // The find inside the first pane's conversation (kept in the history
  // entry's state): undefined while the find bar is closed. findFocus moves
  // the cursor into it.
  const [find, setFind] = useState(() => findFromState(history.state));
  const [findFocus, setFindFocus] = useState(0);
  // The matched words of the hit shown, to highlight in it.
  const [words, setWords] = useState<string[]>([]);
  const locale = pickLocale(typeof navigator === 'undefined' ? [] : navigator.languages);
  const t = catalogs[locale];

  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => () => client.close(), [client]);

  const refused = useCallback(
    (e: unknown) => {
      // This tab's own sign-out ends its session too (its socket closes,
      // requests in flight are refused); it is on its way to the signed-out
      // page, not to sign in again.
      if (signingOut && e instanceof HttpError && e.status === 401) return;
      // With accounts, a tab without a session signs in and comes back.
      if (e instanceof HttpError && e.status === 401 && e.code === 'sign-in-required' && !share) {
        location.assign(`/auth/login?return=${encodeURIComponent(location.pathname + location.search)}`);
        return;
      }
      if (e instanceof HttpError && e.status === 401) {
        setUnauthorized(true);
        client.close();
        return;
      }
      setNotice(e instanceof HttpError ? { code: e.code, reason: e.message } : { code: 'internal', reason: e instanceof Error ? e.message : String(e) });
    },
    [client, share],
  );
  useEffect(() => {
    ended.current = (reason) => refused(new HttpError(401, reason || 'sign-in-required', 'the session ended'));
  }, [refused]);
  const refresh = useCallback(async () => {
    try {
      setConversations(await api.list());
    } catch (e) {
      // A refused token is the token page; otherwise the list stays as it
      // was and the next action refreshes it.
      if (e instanceof HttpError && (e.status === 401 || share)) refused(e);
    }
  }, [api, refused, share]);
  // Through a share link the list holds the one shared conversation.
  useEffect(() => {
    const id = conversations[0]?.id;
    if (share && id) setPanes((ps) => (ps[0]?.conversation ? ps : [{ conversation: id }]));
  }, [share, conversations]);
  // Signed in (accounts): who, and the CSRF token sign-out carries. A form
  // would post with Origin "null" (the page's no-referrer policy), which
  // the server refuses; fetch sends the page's origin.
  const [me, setMe] = useState<{ name?: string; email?: string; csrf: string } | undefined>();
  useEffect(() => {
    if (share || token) return;
    void fetch('/auth/me')
      .then((r) => (r.ok ? (r.json() as Promise<{ name?: string; email?: string; csrf: string }>) : undefined))
      .then(setMe, () => undefined);
  }, [share, token]);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  // Test and bench hook: counts that show the window's bounds from outside.
  useEffect(() => {
    Object.assign(window, { __folio: { cache, client } });
  }, [cache, client]);

  // A deleted conversation's views and page references go at once; a turn
  // that ends may have titled its conversation, so the list is read again.
  useEffect(
    () =>
      client.onEvent((f) => {
        if (f.type === 'event' && f.op === 'deleted') {
          cache.forgetConversation(String(f.conversation));
          void refresh();
        } else if (f.type === 'event' && f.op === 'turn' && f.state === 'idle') {
          void refresh();
        }
      }),
    [client, cache, refresh],
  );

  // A server on a shared database says when it cannot reach it (a status
  // frame) and when it can again; after a reconnect it says so again if it
  // still cannot, so a new connection starts from reachable.
  const [storeDown, setStoreDown] = useState(false);
  useEffect(() => {
    const offEvent = client.onEvent((f) => {
      if (f.type === 'status') setStoreDown(f.store === 'unreachable');
    });
    const offStatus = client.onStatus((s) => {
      if (s === 'open') setStoreDown(false);
    });
    return () => {
      offEvent();
      offStatus();
    };
  }, [client]);

  // Back and forward: the first pane follows the URL.
  useEffect(() => {
    const onPop = (e: PopStateEvent) => {
      const id = conversationFromPath(location.pathname);
      setPanes((ps) => ps.map((p, i) => (i === 0 ? { conversation: id } : p)));
      setAt(atFromSearch(location.search));
      setFind(findFromState(e.state));
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  // navigate puts the first pane's conversation and the entry it is
  // opened at in the URL, and the find query in the history entry; replace
  // is for steps between hits, which back should not walk one by one.
  const navigate = (id: string | undefined, entry?: string, q?: string, replace = false) => {
    const path = pathFor(root, id);
    const search = withAt(location.search, entry);
    const state = q === undefined ? null : { find: q };
    if (replace) history.replaceState(state, '', path + search + location.hash);
    else if (path !== location.pathname || search !== location.search || findFromState(history.state) !== q) history.pushState(state, '', path + search + location.hash);
    setAt(entry);
    setFind(q);
  };
  // Opening at a search hit: the pane's view opens its window around the
  // entry (focusOn, the anchor a branch switch uses), and the entry is marked.
  const conv0 = panes[0]?.conversation;
  const head0 = panes[0]?.head;
  useEffect(() => {
    if (!conv0 || !at) return;
    const key = `${conv0}|${head0 ?? ''}|0`;
    const view = cache.acquire(key);
    view.focusOn(at);
    return () => cache.release(key);
  }, [cache, conv0, head0, at]);
  // The words marked in it: the find's query read as the server's search
  // reads it (search/terms.ts), and the hit's snippet's marked words.
  const matcher = useMemo(() => queryMatcher(find ?? '', words), [find, words]);
  useEffect(() => {
    if (!conv0 || !at) return;
    const key = `${conv0}|${head0 ?? ''}|0`;
    const view = cache.acquire(key);
    const stop = markHit(at, matcher, (e) => view.getState().rows.find((m) => holds(m, e))?.id);
    return () => {
      stop();
      cache.release(key);
    };
  }, [cache, conv0, head0, at, matcher]);
  const openHit = (id: string, entry: string | undefined, q: string, w: string[]) => {
    setPanes((ps) => ps.map((p, i) => (i === 0 ? { conversation: id } : p)));
    setWords(w);
    navigate(id, entry, q || undefined);
    setListOpen(false);
  };
  const openFind = () => {
    if (!conv0) return;
    setFind((f) => f ?? '');
    setFindFocus((n) => n + 1);
  };
  // Ctrl+F (⌘F) finds inside the open conversation: the browser's own find
  // sees only the window of it that is loaded.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f' && conv0) {
        e.preventDefault();
        setFind((f) => f ?? '');
        setFindFocus((n) => n + 1);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [conv0]);

  const open = (slot: number, id: string | undefined) => {
    setPanes((ps) => ps.map((p, i) => (i === slot ? { conversation: id } : p)));
    if (slot === 0) navigate(id);
    setListOpen(false);
  };
  const split = (id: string) => {
    setPanes((ps) => [ps[0] ?? {}, { conversation: id }]);
  };
  // New chat shows an empty pane; the conversation is created by its first
  // send, and the server titles it from that message.
  const start = async (text: string, files: File[], model?: string) => {
    let m: ConversationMeta;
    try {
      m = await api.create();
    } catch (e) {
      refused(e);
      return;
    }
    setFresh((f) => new Set(f).add(m.id));
    setFirst({ id: m.id, text, files, model });
    setConversations((cs) => (cs.some((c) => c.id === m.id) ? cs : [m, ...cs]));
    open(0, m.id);
    void refresh();
  };
  const rename = async (id: string, title: string) => {
    try {
      await api.rename(id, title);
    } catch (e) {
      refused(e);
    }
    await refresh();
  };
  const remove = async (id: string) => {
    try {
      await api.remove(id);
    } catch (e) {
      refused(e);
      return;
    }
    cache.forgetConversation(id);
    setPanes((ps) => ps.map((p) => (p.conversation === id ? {} : p)));
    if (panes[0]?.conversation === id) navigate(undefined);
    await refresh();
  };

  // A conversation this tab created and the server has not titled yet (its
  // first turn runs) is a new chat, in the list and the header, never its
  // raw ID; any other untitled log (written by another program) shows its ID.
  const [fresh, setFresh] = useState<ReadonlySet<string>>(() => new Set());
  const shown = useMemo(() => conversations.map((c) => (c.title ? c : { ...c, title: fresh.has(c.id) ? t.newChat : c.id })), [conversations, fresh, t]);

  if (unauthorized) {
    return (
      <LocaleContext.Provider value={locale}>
        <TokenPage origin={location.origin} hadToken={token !== undefined} />
      </LocaleContext.Provider>
    );
  }
  return (
    <LocaleContext.Provider value={locale}>
      <div className="app" data-testid="app" data-list-open={listOpen} data-split={panes.length > 1}>
        {share ? null : (
        <aside className="side-pane">
          <SearchPanel token={token} onOpen={openHit} />
          <ConversationList
            conversations={shown}
            selectedId={panes[0]?.conversation}
            onSelect={(id) => open(0, id)}
            onCreate={() => open(0, undefined)}
            onRename={(id, t) => void rename(id, t)}
            onDelete={(id) => void remove(id)}
            onSplit={split}
          />
          <button type="button" className="button theme-toggle" onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
            {theme === 'dark' ? <Sun aria-hidden="true" size={14} /> : <Moon aria-hidden="true" size={14} />}
            {theme === 'dark' ? t.lightTheme : t.darkTheme}
          </button>
          {me ? (
            <div className="sign-out" data-testid="sign-out">
              <span className="signed-in-as">{me.name || me.email}</span>
              <button type="button" className="button" onClick={() => void signOut(me.csrf)}>
                {t.signOut}
              </button>
            </div>
          ) : null}
        </aside>
        )}
        <div className="scrim" onClick={() => setListOpen(false)} aria-hidden="true" />
        {notice ? (
          <div className="app-notice">
            <RefusalNotice refusal={notice} onDismiss={() => setNotice(undefined)} />
          </div>
        ) : null}
        {storeDown && (
          <div className="store-banner" role="status" data-testid="store-unavailable">
            {t.storeUnavailable}
          </div>
        )}
        <div className="panes">
          {panes.map((p, slot) => {
            // A conversation the list does not have yet (just created, or a
            // link opened before the list loaded) still opens.
            const meta = shown.find((c) => c.id === p.conversation) ?? (p.conversation ? { id: p.conversation, title: fresh.has(p.conversation) ? t.newChat : p.conversation, updated: '' } : undefined);
            return (
              <ChatPane
                key={slot}
                slot={slot}
                client={client}
                api={api}
                cache={cache}
                conversation={meta}
                head={p.head}
                onOpenList={() => setListOpen(true)}
                onStart={slot === 0 && !share ? (text, files, model) => void start(text, files, model) : undefined}
                onShowList={() => {
                  open(slot, undefined);
                  setListOpen(true);
                }}
                firstMessage={first && first.id === p.conversation ? first : undefined}
                onFirstSent={() => setFirst(undefined)}
                onClose={slot > 0 ? () => setPanes((ps) => ps.slice(0, slot)) : undefined}
                readOnly={share !== undefined}
                canShare={me !== undefined && !share}
                onFind={slot === 0 ? openFind : undefined}
                find={
                  slot === 0 && find !== undefined && p.conversation ? (
                    <FindBar
                      token={token}
                      conversation={p.conversation}
                      query={find}
                      at={at}
                      focusKey={findFocus}
                      onQuery={(q) => navigate(p.conversation, at, q, true)}
                      onGo={(entry, w) => {
                        setWords(w);
                        navigate(p.conversation, entry, find, true);
                      }}
                      onClose={() => navigate(p.conversation, at, undefined, true)}
                    />
                  ) : undefined
                }
              />
            );
          })}
        </div>
      </div>
    </LocaleContext.Provider>
  );
}

// signingOut is set while this tab signs out, so the connection the server
// closes on sign-out does not send the tab to sign in instead.
let signingOut = false;

/** signOut ends the session (on every replica) and shows the signed-out page. */
async function signOut(csrf: string) {
  signingOut = true;
  await fetch('/auth/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf }, redirect: 'manual' }).catch(() => undefined);
  location.assign('/auth/signed-out');
}
