import type { Conversation } from '../chat/types';

export interface ConversationListProps {
  conversations: readonly Conversation[];
  selectedId: string | undefined;
  onSelect: (id: string) => void;
  onCreate: () => void;
}

function formatUpdated(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** ConversationList is the side pane: newest first, with a button for a new conversation. */
export function ConversationList({ conversations, selectedId, onSelect, onCreate }: ConversationListProps) {
  const sorted = [...conversations].sort((a, b) => b.updated.localeCompare(a.updated));
  return (
    <nav className="conversation-list" aria-label="Conversations">
      <div className="list-header">
        <span className="brand">folio</span>
        <button type="button" className="new-button" onClick={onCreate}>
          New
        </button>
      </div>
      <ul>
        {sorted.map((c) => (
          <li key={c.id}>
            <button
              type="button"
              className="conversation-item"
              aria-current={c.id === selectedId ? 'page' : undefined}
              onClick={() => onSelect(c.id)}
            >
              <span className="conversation-title">{c.title}</span>
              <time className="conversation-updated" dateTime={c.updated}>
                {formatUpdated(c.updated)}
              </time>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
