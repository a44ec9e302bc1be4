import { Search, X } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useCatalog } from '../i18n/catalog';
import { HttpError } from '../protocol/api';
import type { SearchHit } from '../protocol/frames';
import '../styles/search.css';
import { searchConversations } from './api';
import { markWords, unmarkWords } from './mark';
import type { Matcher } from './terms';

export interface SearchPanelProps {
  token?: string;
  /** Called with a chosen hit: open its conversation at its entry (and keep the query, to step through its hits there); words are the matched words its snippet marks. */
  onOpen: (conversation: string, entry: string | undefined, query: string, words: string[]) => void;
}

function when(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/**
 * SearchPanel is the search field over the conversation list: as the person
 * types (after a short pause) it asks GET /api/v2/search and lists the hits,
 * best first, each with its conversation's title, date, role and a snippet
 * whose matched words are marked. A malformed query shows the server's
 * message saying what is wrong. Arrow keys move through the hits; Enter or a
 * click opens one; Escape clears the field.
 */
export function SearchPanel({ token, onOpen }: SearchPanelProps) {
  const t = useCatalog();
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<SearchHit[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [sel, setSel] = useState(0);
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    const query = q.trim();
    if (!query) {
      setHits(undefined);
      setError(undefined);
      return;
    }
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      setBusy(true);
      searchConversations(query, { token, signal: ctl.signal })
        .then((a) => {
          setHits(a.hits);
          setError(undefined);
          setSel(0);
        })
        .catch((e: unknown) => {
          if (ctl.signal.aborted) return;
          setHits(undefined);
          setError(e instanceof HttpError ? e.message : 'The search failed; try again.');
        })
        .finally(() => {
          if (!ctl.signal.aborted) setBusy(false);
        });
    }, 200);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [q, token]);

  const choose = (h: SearchHit | undefined) => {
    if (h) onOpen(h.conversation, h.entry || undefined, q.trim(), hitWords(h));
  };
  const move = (n: number) => {
    if (!hits?.length) return;
    const i = (sel + n + hits.length) % hits.length;
    setSel(i);
    list.current?.querySelectorAll('li')[i]?.scrollIntoView({ block: 'nearest' });
  };

  return (
    <div className="search-panel" data-testid="search">
      <label className="search-field">
        <Search aria-hidden="true" size={14} />
        <input
          type="search"
          placeholder={t.searchPlaceholder}
          aria-label={t.searchPlaceholder}
          value={q}
          spellCheck={false}
          onChange={(e) => setQ(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              move(1);
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              move(-1);
            } else if (e.key === 'Enter') {
              e.preventDefault();
              choose(hits?.[sel]);
            } else if (e.key === 'Escape') setQ('');
          }}
        />
        {q && (
          <button type="button" className="icon-button" aria-label={t.searchClear} onClick={() => setQ('')}>
            <X aria-hidden="true" size={14} />
          </button>
        )}
      </label>
      {error && (
        <p className="search-error" role="alert" data-testid="search-error">
          {error}
        </p>
      )}
      {hits && (
        <ol className="search-results" ref={list} aria-label={t.searchResults} aria-busy={busy}>
          {hits.length === 0 && <li className="search-empty">{t.searchNothing(q.trim())}</li>}
          {hits.map((h, i) => (
            <li key={`${h.conversation}/${h.entry ?? ''}`} aria-selected={i === sel} data-hit-entry={h.entry ?? ''} data-hit-conversation={h.conversation}>
              <button type="button" className="search-hit" onClick={() => choose(h)}>
                <span className="search-hit-head">
                  <span className="search-hit-title">{h.title || h.conversation}</span>
                  <span className="search-hit-meta">
                    {(t.searchRole as Record<string, string>)[h.role] ?? h.role} {when(h.at)}
                  </span>
                </span>
                <span className="search-snippet">
                  {h.snippet.map((s, k) => (s.hit ? <mark key={k}>{s.text}</mark> : <span key={k}>{s.text}</span>))}
                </span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

let marked: Element | undefined;

/** hitWords are the words a hit's snippet marks, one by one. */
export function hitWords(h: SearchHit): string[] {
  return h.snippet.filter((s) => s.hit).flatMap((s) => s.text.split(/\s+/).filter((w) => w !== ''));
}

/** wordRanges are the ranges of words (any case, inside longer words too) in el's text; markHit marks whole words as the search folds them instead (mark.ts). */
export function wordRanges(el: Element, words: readonly string[]): Range[] {
  const lower = [...new Set(words.map((w) => w.toLowerCase()).filter((w) => w !== ''))];
  const out: Range[] = [];
  if (lower.length === 0) return out;
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const text = (n.nodeValue ?? '').toLowerCase();
    if (text.length !== (n.nodeValue ?? '').length) continue; // a case fold that changes lengths: positions would be off
    for (const w of lower) {
      for (let i = text.indexOf(w); i >= 0; i = text.indexOf(w, i + w.length)) {
        const r = document.createRange();
        r.setStart(n, i);
        r.setEnd(n, i + w.length);
        out.push(r);
      }
    }
  }
  return out;
}

/**
 * markHit highlights the entry a search opened once its row or segment is
 * on the page (the window is opened around it), marks the words the query
 * matched inside it (mark.ts: <mark> around each, after the markdown was
 * rendered and sanitized), and brings the first marked word (else the entry)
 * into view. While it is shown, a re-render of the entry's content (code
 * highlighted once the browser is idle, a streaming answer) is marked again.
 * It gives up after a minute (a window far back in a long conversation can
 * take seconds to load on a busy server). It returns a cancel function,
 * which also takes the word marks out again.
 */
export function markHit(entry: string, words: Matcher = { words: new Set(), prefixes: [] }, rowOf?: (entry: string) => string | undefined): () => void {
  const sel = ['data-row-id', 'data-message-id', 'data-entry-id', 'data-step-id'].map((a) => `[${a}="${CSS.escape(entry)}"]`).join(',');
  let tries = 0;
  let shown: Element | undefined;
  let watch: MutationObserver | undefined;
  const timer = setInterval(() => {
    // The entry's own element, else the chat row that shows it (an answer
    // is a part of its reply's row).
    let el = document.querySelector(sel);
    const row = el ? undefined : rowOf?.(entry);
    if (!el && row) el = document.querySelector(`[data-message-id="${CSS.escape(row)}"]`);
    if (el) {
      marked?.classList.remove('search-hit-mark');
      marked?.removeAttribute('data-search-hit');
      el.classList.add('search-hit-mark');
      el.setAttribute('data-search-hit', entry);
      marked = el;
      shown = el;
      const first = markWords(el, words)[0];
      (first ?? el).scrollIntoView({ block: 'center' });
      if (typeof MutationObserver !== 'undefined') {
        const target = el;
        watch = new MutationObserver(() => {
          watch!.disconnect();
          markWords(target, words);
          watch!.observe(target, { childList: true, subtree: true, characterData: true });
        });
        watch.observe(target, { childList: true, subtree: true, characterData: true });
      }
      clearInterval(timer);
    } else if (++tries > 600) clearInterval(timer);
  }, 100);
  return () => {
    clearInterval(timer);
    watch?.disconnect();
    if (shown) unmarkWords(shown);
  };
}
