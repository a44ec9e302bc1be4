import { useState } from 'react';
import type { ConversationMeta } from '../chat/types';

export interface ConversationListProps {
  conversations: readonly ConversationMeta[];
  selectedId: string | undefined;
  onSelect: (id: string) => void;
  onCreate: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
  onSplit?: (id: string) => void;
}

function formatUpdated(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** ConversationList is the side pane: newest first; create, rename, delete, open beside. */
export function ConversationList({ conversations, selectedId, onSelect, onCreate, onRename, onDelete, onSplit }: ConversationListProps) {
  const [editing, setEditing] = useState<string | undefined>();
  const [title, setTitle] = useState('');
  const [confirming, setConfirming] = useState<string | undefined>();
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
          <li key={c.id} className="conversation-row" data-conversation-id={c.id}>
            {editing === c.id ? (
              <form
                className="rename-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  onRename(c.id, title.trim() || c.title);
                  setEditing(undefined);
                }}
              >
                <input aria-label="Title" value={title} autoFocus onChange={(e) => setTitle(e.target.value)} />
                <button type="submit">Save</button>
              </form>
            ) : (
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
            )}
            <span className="conversation-actions">
              {onSplit ? (
                <button type="button" className="link-button" aria-label={`Open ${c.title} beside`} onClick={() => onSplit(c.id)}>
                  Split
                </button>
              ) : null}
              <button
                type="button"
                className="link-button"
                aria-label={`Rename ${c.title}`}
                onClick={() => {
                  setEditing(c.id);
                  setTitle(c.title);
                }}
              >
                Rename
              </button>
              {confirming === c.id ? (
                <button type="button" className="link-button danger" onClick={() => onDelete(c.id)}>
                  Delete?
                </button>
              ) : (
                <button type="button" className="link-button" aria-label={`Delete ${c.title}`} onClick={() => setConfirming(c.id)}>
                  Delete
                </button>
              )}
            </span>
          </li>
        ))}
      </ul>
    </nav>
  );
}
