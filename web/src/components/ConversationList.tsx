import { Columns2, MoreHorizontal, Pencil, SquarePen, Trash2 } from 'lucide-react';
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { ConversationMeta } from '../chat/types';
import { useCatalog } from '../i18n/catalog';

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
  if (Number.isNaN(d.getTime())) return '';
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString(undefined, { timeStyle: 'short' }) : d.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/**
 * RowMenu is a row's actions behind one button: a menu (ARIA menu and
 * menuitems) that opens with Enter, Space or ArrowDown, moves with the arrow
 * keys, Home and End, and closes with Escape (focus returns to the button) or
 * Tab.
 */
function RowMenu({ c, onRename, onDelete, onSplit }: { c: ConversationMeta; onRename: () => void; onDelete: () => void; onSplit?: () => void }) {
  const t = useCatalog();
  const [open, setOpen] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];
  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    const away = (e: PointerEvent) => {
      if (!menu.current?.contains(e.target as Node) && !button.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [open]);
  const close = (focus = true) => {
    setOpen(false);
    setConfirming(false);
    if (focus) button.current?.focus();
  };
  const onMenuKey = (e: KeyboardEvent) => {
    const list = items();
    const i = list.indexOf(document.activeElement as HTMLButtonElement);
    const go = (n: number) => {
      e.preventDefault();
      list[(n + list.length) % list.length]?.focus();
    };
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(list.length - 1);
    else if (e.key === 'Escape') {
      e.preventDefault();
      close();
    } else if (e.key === 'Tab') close(false);
  };
  const act = (fn: () => void) => () => {
    close();
    fn();
  };
  return (
    <span className="row-menu">
      <button
        ref={button}
        type="button"
        className="icon-button row-menu-button"
        aria-label={t.rowActions(c.title)}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => (open ? close() : setOpen(true))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setOpen(true);
          }
        }}
      >
        <MoreHorizontal aria-hidden="true" size={16} />
      </button>
      {open ? (
        <div ref={menu} className="menu" role="menu" aria-label={t.rowActions(c.title)} onKeyDown={onMenuKey}>
          {onSplit ? (
            <button type="button" role="menuitem" tabIndex={-1} onClick={act(onSplit)}>
              <Columns2 aria-hidden="true" size={14} />
              {t.openBeside}
            </button>
          ) : null}
          <button type="button" role="menuitem" tabIndex={-1} onClick={act(onRename)}>
            <Pencil aria-hidden="true" size={14} />
            {t.rename}
          </button>
          {confirming ? (
            <button type="button" role="menuitem" tabIndex={-1} className="danger" onClick={act(onDelete)} autoFocus>
              <Trash2 aria-hidden="true" size={14} />
              {t.confirmDelete}
            </button>
          ) : (
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              onClick={(e) => {
                setConfirming(true);
                // The confirming item replaces this one; keep focus in the menu.
                const m = e.currentTarget.parentElement;
                requestAnimationFrame(() => m?.querySelector<HTMLButtonElement>('.danger')?.focus());
              }}
            >
              <Trash2 aria-hidden="true" size={14} />
              {t.delete}
            </button>
          )}
        </div>
      ) : null}
    </span>
  );
}

/** ConversationList is the side pane: newest first; a new chat, and each row's actions in its menu. */
export function ConversationList({ conversations, selectedId, onSelect, onCreate, onRename, onDelete, onSplit }: ConversationListProps) {
  const t = useCatalog();
  const [editing, setEditing] = useState<string | undefined>();
  const [title, setTitle] = useState('');
  const sorted = [...conversations].sort((a, b) => b.updated.localeCompare(a.updated));
  return (
    <nav className="conversation-list" aria-label={t.conversations}>
      <div className="list-header">
        <span className="brand">folio</span>
        <button type="button" className="button new-button" onClick={onCreate}>
          <SquarePen aria-hidden="true" size={14} />
          {t.newChat}
        </button>
      </div>
      <ul>
        {sorted.map((c) => (
          <li key={c.id} className="conversation-row" data-conversation-id={c.id} aria-current={c.id === selectedId ? 'page' : undefined}>
            {editing === c.id ? (
              <form
                className="rename-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  onRename(c.id, title.trim() || c.title);
                  setEditing(undefined);
                }}
              >
                <input
                  aria-label={t.title}
                  value={title}
                  autoFocus
                  onChange={(e) => setTitle(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') setEditing(undefined);
                  }}
                />
                <button type="submit" className="button button-primary">
                  {t.save}
                </button>
              </form>
            ) : (
              <>
                <button type="button" className="conversation-item" aria-current={c.id === selectedId ? 'page' : undefined} onClick={() => onSelect(c.id)}>
                  <span className="conversation-title">{c.title}</span>
                  <time className="conversation-updated" dateTime={c.updated}>
                    {formatUpdated(c.updated)}
                  </time>
                </button>
                <RowMenu
                  c={c}
                  onSplit={onSplit ? () => onSplit(c.id) : undefined}
                  onRename={() => {
                    setEditing(c.id);
                    setTitle(c.title);
                  }}
                  onDelete={() => onDelete(c.id)}
                />
              </>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}
