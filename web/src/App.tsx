import { useCallback, useEffect, useMemo, useState } from 'react';
import { ViewCache } from './chat/cache';
import type { ConversationMeta } from './chat/types';
import { TranscriptView } from './chat/view';
import { ChatPane } from './components/ChatPane';
import { ConversationList } from './components/ConversationList';
import { LocaleContext, pickLocale } from './i18n/catalog';
import { httpApi } from './protocol/api';
import { Client, wsURL } from './protocol/client';
import { takeToken, wsProtocols } from './protocol/token';
import { applyTheme, initialTheme, type Theme } from './theme';

interface Pane {
  conversation?: string;
  head?: string;
}

/**
 * App owns the tab's protocol client, the view cache (four conversations),
 * the conversation list and up to two panes.
 */
export function App() {
  const token = useMemo(() => takeToken(), []);
  const client = useMemo(() => new Client({ url: wsURL(location), protocols: wsProtocols(token) }), [token]);
  const api = useMemo(() => httpApi(token), [token]);
  const cache = useMemo(() => new ViewCache<TranscriptView>((key) => {
    const [conv, head] = key.split('|');
    return new TranscriptView(client, conv!, head || undefined);
  }), [client]);
  const [conversations, setConversations] = useState<ConversationMeta[]>([]);
  const [panes, setPanes] = useState<Pane[]>([{}]);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [listOpen, setListOpen] = useState(false);
  const locale = pickLocale(typeof navigator === 'undefined' ? [] : navigator.languages);

  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => () => client.close(), [client]);

  const refresh = useCallback(async () => {
    try {
      setConversations(await api.list());
    } catch {
      /* the list stays as it was; the next action refreshes it */
    }
  }, [api]);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  // Test and bench hook: counts that show the window's bounds from outside.
  useEffect(() => {
    (window as unknown as { __folio: unknown }).__folio = { cache, client };
  }, [cache, client]);

  // A deleted conversation's views and page references go at once.
  useEffect(
    () =>
      client.onEvent((f) => {
        if (f.type === 'event' && f.op === 'deleted') {
          cache.forgetConversation(String(f.conversation));
          void refresh();
        }
      }),
    [client, cache, refresh],
  );

  const open = (slot: number, id: string) => {
    setPanes((ps) => ps.map((p, i) => (i === slot ? { conversation: id } : p)));
    setListOpen(false);
  };
  const split = (id: string) => {
    setPanes((ps) => [ps[0] ?? {}, { conversation: id }]);
  };
  const create = async () => {
    const m = await api.create();
    await refresh();
    open(0, m.id);
  };
  const rename = async (id: string, title: string) => {
    await api.rename(id, title);
    await refresh();
  };
  const remove = async (id: string) => {
    await api.remove(id);
    cache.forgetConversation(id);
    setPanes((ps) => ps.map((p) => (p.conversation === id ? {} : p)));
    await refresh();
  };

  return (
    <LocaleContext.Provider value={locale}>
      <div className="app" data-testid="app" data-list-open={listOpen} data-split={panes.length > 1}>
        <aside className="side-pane">
          <ConversationList
            conversations={conversations}
            selectedId={panes[0]?.conversation}
            onSelect={(id) => open(0, id)}
            onCreate={() => void create()}
            onRename={(id, t) => void rename(id, t)}
            onDelete={(id) => void remove(id)}
            onSplit={split}
          />
          <button type="button" className="theme-toggle" onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}>
            {theme === 'dark' ? 'Light theme' : 'Dark theme'}
          </button>
        </aside>
        <div className="scrim" onClick={() => setListOpen(false)} aria-hidden="true" />
        <div className="panes">
          {panes.map((p, slot) => {
            const meta = conversations.find((c) => c.id === p.conversation);
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
                onClose={slot > 0 ? () => setPanes((ps) => ps.slice(0, slot)) : undefined}
              />
            );
          })}
        </div>
      </div>
    </LocaleContext.Provider>
  );
}
