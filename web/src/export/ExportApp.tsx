import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { groupMessage } from '../chat/rows';
import type { Message } from '../chat/types';
import { MessageBubble } from '../components/Bubbles';
import { size, type ExportAttachment } from './attachments';
import { earlier, groupEntries, later, latestWindow, parsePage, type ExportMeta, type PageWindow } from './data';

/** Words of the export's own controls (the rows' words come from the app's catalog). */
const words = {
  en: {
    earlier: 'Show earlier messages',
    later: 'Show later messages',
    first: 'First messages',
    latest: 'Latest messages',
    page: (lo: number, hi: number, n: number) => (hi - lo > 1 ? `pages ${lo + 1}–${hi} of ${n}` : `page ${hi} of ${n}`),
    entries: (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`,
    started: (d: string) => `started ${d}`,
    problems: (n: number) => `${n} line(s) of the log were not readable and are not shown`,
    untitled: (id: string) => `Conversation ${id}`,
    exported: 'Exported from folio',
    attachments: (n: number) => `${n} ${n === 1 ? 'attachment' : 'attachments'}`,
    download: 'Download',
    omittedFile: (limit: string) => `not in this file: larger than the export's limit of ${limit} per attachment`,
    omittedTotal: (limit: string) => `not in this file: the export's attachments are limited to ${limit} in all`,
  },
  de: {
    earlier: 'Frühere Nachrichten zeigen',
    later: 'Spätere Nachrichten zeigen',
    first: 'Erste Nachrichten',
    latest: 'Neueste Nachrichten',
    page: (lo: number, hi: number, n: number) => (hi - lo > 1 ? `Seiten ${lo + 1}–${hi} von ${n}` : `Seite ${hi} von ${n}`),
    entries: (n: number) => `${n} ${n === 1 ? 'Eintrag' : 'Einträge'}`,
    started: (d: string) => `begonnen ${d}`,
    problems: (n: number) => `${n} Zeile(n) des Protokolls waren nicht lesbar und fehlen`,
    untitled: (id: string) => `Unterhaltung ${id}`,
    exported: 'Aus folio exportiert',
    attachments: (n: number) => `${n} ${n === 1 ? 'Anhang' : 'Anhänge'}`,
    download: 'Herunterladen',
    omittedFile: (limit: string) => `nicht in dieser Datei: größer als die Grenze des Exports von ${limit} je Anhang`,
    omittedTotal: (limit: string) => `nicht in dieser Datei: die Anhänge eines Exports sind auf ${limit} insgesamt begrenzt`,
  },
};
export type ExportWords = (typeof words)['en'];
export const exportWords = (locale: 'en' | 'de'): ExportWords => words[locale];

/** A page's rows, each with the IDs of the entries it shows. */
interface PageRows {
  rows: { message: Message; ids: string[] }[];
}

export interface ExportAppProps {
  meta: ExportMeta;
  /** The text of page i (its JSON), read from the document when shown. */
  pageText: (i: number) => string | null;
  words: ExportWords;
  /** The files sent with the conversation, embedded in the file (or listed without their bytes). */
  attachments?: readonly ExportAttachment[];
}

/**
 * ExportApp shows an exported conversation: its latest page first, with
 * controls that bring earlier (and back later) pages into a window of a
 * few pages, so the DOM stays small whatever the conversation's length.
 * Each row is the web app's own row component, given no server: nothing
 * in it can fetch, retry or edit.
 */
export function ExportApp({ meta, pageText, words: t, attachments = [] }: ExportAppProps) {
  const n = meta.pages;
  const [win, setWin] = useState<PageWindow>(() => latestWindow(n));
  const cache = useRef(new Map<number, PageRows>());
  const list = useRef<HTMLDivElement>(null);
  // The row to keep in place across a change of the window, and where it was.
  const anchor = useRef<{ id: string; top: number } | undefined>(undefined);

  const pages = useMemo(() => {
    const out: PageRows[] = [];
    for (let i = win.lo; i < win.hi; i++) {
      let p = cache.current.get(i);
      if (!p) {
        const rows = groupEntries(parsePage(pageText(i))).flatMap((held) => {
          const message = groupMessage(held, false);
          return message ? [{ message, ids: held.map((h) => h.entry.id) }] : [];
        });
        p = { rows };
        cache.current.set(i, p);
      }
      out.push(p);
    }
    // Parsed pages outside the window are let go.
    for (const k of cache.current.keys()) if (k < win.lo || k >= win.hi) cache.current.delete(k);
    return out;
  }, [win, pageText]);

  const move = (next: PageWindow, keep: 'first' | 'last') => {
    const rows = list.current?.querySelectorAll<HTMLElement>('.row');
    const el = keep === 'first' ? rows?.[0] : rows?.[rows.length - 1];
    anchor.current = el?.dataset.rowId ? { id: el.dataset.rowId, top: el.getBoundingClientRect().top } : undefined;
    setWin(next);
  };

  useLayoutEffect(() => {
    const a = anchor.current;
    anchor.current = undefined;
    if (!a || !list.current) return;
    const el = list.current.querySelector<HTMLElement>(`.row[data-row-id="${CSS.escape(a.id)}"]`);
    if (el) window.scrollBy(0, el.getBoundingClientRect().top - a.top);
  }, [win]);

  // The first view is the latest message, as the web app opens.
  useLayoutEffect(() => {
    window.scrollTo(0, document.documentElement.scrollHeight);
  }, []);

  const title = meta.title || t.untitled(meta.conversationId);
  const facts = [t.entries(meta.entries)];
  if (meta.startedAt) facts.push(t.started(new Date(meta.startedAt).toLocaleString()));
  if (n > 1) facts.push(t.page(win.lo, win.hi, n));
  return (
    <div className="export" data-testid="export" data-pages={n} data-lo={win.lo} data-hi={win.hi}>
      <header className="export-head">
        <h1 className="export-title">{title}</h1>
        <p className="export-facts">{facts.join(' · ')}</p>
        {meta.problems > 0 ? <p className="export-problems">{t.problems(meta.problems)}</p> : null}
      </header>
      {attachments.length > 0 ? <Attachments attachments={attachments} t={t} /> : null}
      <div className="message-list" ref={list}>
        {win.lo > 0 ? (
          <div className="export-nav">
            <button type="button" className="link-button" data-testid="show-first" onClick={() => move({ lo: 0, hi: 1 }, 'first')}>
              {t.first}
            </button>
            <button type="button" className="action-button" data-testid="show-earlier" onClick={() => move(earlier(win), 'first')}>
              {t.earlier}
            </button>
          </div>
        ) : null}
        {pages.flatMap((p) =>
          p.rows.map(({ message, ids }) => (
            <div key={message.id} className="row" data-row-id={message.id} data-entry-ids={JSON.stringify(ids)}>
              <MessageBubble message={message} />
            </div>
          )),
        )}
        {win.hi < n ? (
          <div className="export-nav">
            <button type="button" className="action-button" data-testid="show-later" onClick={() => move(later(win, n), 'last')}>
              {t.later}
            </button>
            <button type="button" className="link-button" data-testid="show-latest" onClick={() => move(latestWindow(n), 'last')}>
              {t.latest}
            </button>
          </div>
        ) : null}
      </div>
      <footer className="export-foot">{t.exported}</footer>
    </div>
  );
}

/**
 * Attachments lists the files sent with the conversation: a raster image
 * shown, anything else a download link, both from the data: address of the
 * bytes the file holds (nothing is fetched); a file left out for its size
 * is a line that says so.
 */
function Attachments({ attachments, t }: { attachments: readonly ExportAttachment[]; t: ExportWords }) {
  return (
    <section className="export-attachments" data-testid="export-attachments" aria-label={t.attachments(attachments.length)}>
      <h2 className="export-attachments-title">{t.attachments(attachments.length)}</h2>
      <ul className="export-attachment-list">
        {attachments.map((a, i) => (
          <li key={`${a.id}-${i}`} className="export-attachment" data-attachment={a.name} data-omitted={a.omitted ?? ''}>
            {a.image && a.href ? <img className="export-attachment-image" src={a.href} alt={a.name} /> : null}
            <span className="export-attachment-name">{a.name}</span>{' '}
            <span className="export-attachment-facts">
              {size(a.size)}
              {a.type ? ` · ${a.type}` : ''}
            </span>{' '}
            {a.href ? (
              <a className="export-attachment-download" href={a.href} download={a.name}>
                {t.download}
              </a>
            ) : (
              <span className="export-attachment-omitted" role="note">
                {a.omitted === 'total' ? t.omittedTotal(size(a.limit ?? 0)) : t.omittedFile(size(a.limit ?? 0))}
              </span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
