import { useEffect, useState } from 'react';
import { ChatPane } from './components/ChatPane';
import { ConversationList } from './components/ConversationList';
import { useFixtureChat } from './dev/fixture';
import { LocaleContext, pickLocale } from './i18n/catalog';
import { applyTheme, initialTheme, type Theme } from './theme';

/** App lays out the conversation list and the chat pane, and owns the theme. */
export function App() {
  // DEV FIXTURE until the protocol client lands (see dev/fixture.ts).
  const chat = useFixtureChat();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [listOpen, setListOpen] = useState(false);
  const locale = pickLocale(typeof navigator === 'undefined' ? [] : navigator.languages);

  useEffect(() => applyTheme(theme), [theme]);

  const select = (id: string) => {
    chat.select(id);
    setListOpen(false);
  };

  return (
    <LocaleContext.Provider value={locale}>
      <div className="app" data-testid="app" data-list-open={listOpen}>
        <aside className="side-pane">
          <ConversationList
            conversations={chat.conversations}
            selectedId={chat.selected?.id}
            onSelect={select}
            onCreate={chat.create}
          />
          <button
            type="button"
            className="theme-toggle"
            onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')}
          >
            {theme === 'dark' ? 'Light theme' : 'Dark theme'}
          </button>
        </aside>
        <div className="scrim" onClick={() => setListOpen(false)} aria-hidden="true" />
        <ChatPane conversation={chat.selected} onSend={chat.send} onOpenList={() => setListOpen(true)} />
      </div>
    </LocaleContext.Provider>
  );
}
