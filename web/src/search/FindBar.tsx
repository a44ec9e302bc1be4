import { ChevronDown, ChevronUp, Search, X } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useCatalog } from '../i18n/catalog';
import { HttpError } from '../protocol/api';
import '../styles/search.css';
import { searchConversations } from './api';
import { hitWords } from './SearchPanel';
import { type FindState, inConversation, position, step } from './find';

export interface FindBarProps {
  token?: string;
  conversation: string;
  /** The query whose hits are stepped through ('' while none is asked). */
  query: string;
  /** The entry the window is at (?at=). */
  at: string | undefined;
  /** A new query was entered. */
  onQuery: (query: string) => void;
  /** Show this hit: open the window around it and mark it (and its matched words). */
  onGo: (entry: string, words: string[]) => void;
  onClose: () => void;
  /** Puts the cursor in the field whenever it changes (and is not 0). */
  focusKey?: number;
}

// The most hits a find lists (the server's limit for a newest-first
// query, search.MaxFind).
const LIMIT = 10000;

/**
 * FindBar finds a query inside one conversation and steps from hit to hit,
 * newest first: it asks GET /api/v2/search for the conversation's newest
 * matches (order=newest), and each step opens the pane's window around the
 * hit (the ?at= anchor a search hit uses), so a hit far back in a long
 * conversation costs one page. Enter in the field finds (or goes to the
 * next, older hit), Shift+Enter goes to the newer one, Escape closes; the
 * buttons do the same.
 */
export function FindBar({ token, conversation, query, at, onQuery, onGo, onClose, focusKey }: FindBarProps) {
  const t = useCatalog();
  const [text, setText] = useState(query);
  const [found, setFound] = useState<FindState | undefined>();
  const words = useRef(new Map<string, string[]>());
  const [error, setError] = useState<string | undefined>();
  const field = useRef<HTMLInputElement>(null);
  const atRef = useRef(at);
  atRef.current = at;

  useEffect(() => setText(query), [query]);
  useEffect(() => {
    if (focusKey) field.current?.focus();
  }, [focusKey]);
  useEffect(() => {
    setFound(undefined);
    setError(undefined);
    if (!query.trim()) return;
    const ctl = new AbortController();
    searchConversations(inConversation(query, conversation), { token, signal: ctl.signal, limit: LIMIT, order: 'newest' })
      .then((a) => {
        const s: FindState = { hits: a.hits.map((h) => h.entry ?? '').filter((e) => e !== ''), more: a.hits.length >= LIMIT };
        words.current = new Map(a.hits.map((h) => [h.entry ?? '', hitWords(h)]));
        setFound(s);
        // A fresh find goes to the newest hit, unless the window is at one
        // already (a search hit opened it, or a reload).
        if (s.hits.length > 0 && position(s, atRef.current) < 0) onGo(s.hits[0]!, words.current.get(s.hits[0]!) ?? []);
      })
      .catch((e: unknown) => {
        if (ctl.signal.aborted) return;
        setError(e instanceof HttpError ? e.message : 'The search failed; try again.');
      });
    return () => ctl.abort();
    // onGo is the parent's navigation, new on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [query, conversation, token]);

  const go = (dir: 1 | -1) => {
    if (!found) return;
    const e = step(found, at, dir);
    if (e) onGo(e, words.current.get(e) ?? []);
  };
  const i = found ? position(found, at) : -1;
  let status = '';
  if (error) status = error;
  else if (found && found.hits.length === 0) status = t.findNothing;
  else if (found && i >= 0) status = t.findHit(i + 1, found.hits.length, found.more);
  else if (found) status = t.findCount(found.hits.length, found.more);

  return (
    // The bar floats over the top of the transcript (a slot of no height):
    // opening or closing it must not change the message column's height,
    // which the window's scroll anchoring reads while it loads a hit.
    <div className="find-slot">
    <div className="find-bar" role="search" data-testid="find-bar">
      <label className="search-field find-field">
        <Search aria-hidden="true" size={14} />
        <input
          ref={field}
          type="search"
          placeholder={t.findPlaceholder}
          aria-label={t.findPlaceholder}
          value={text}
          spellCheck={false}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              if (text.trim() !== query.trim()) onQuery(text.trim());
              else go(e.shiftKey ? -1 : 1);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              onClose();
            }
          }}
        />
      </label>
      <span className={error ? 'find-status search-error' : 'find-status'} role={error ? 'alert' : 'status'} data-testid="find-status">
        {status}
      </span>
      <button type="button" className="icon-button" aria-label={t.findNewer} title={t.findNewer} disabled={!found || !step(found, at, -1)} onClick={() => go(-1)}>
        <ChevronUp aria-hidden="true" size={16} />
      </button>
      <button type="button" className="icon-button" aria-label={t.findOlder} title={t.findOlder} disabled={!found || !step(found, at, 1)} onClick={() => go(1)}>
        <ChevronDown aria-hidden="true" size={16} />
      </button>
      <button type="button" className="icon-button" aria-label={t.findClose} title={t.findClose} onClick={onClose}>
        <X aria-hidden="true" size={16} />
      </button>
    </div>
    </div>
  );
}
