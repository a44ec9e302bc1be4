// What an exported HTML file holds, read back: its pages of entries (each a
// <script type="application/json" class="folio-page"> the Go writer filled),
// the entries of a page grouped into display groups as the server's pager
// groups them, and the window of pages the file shows at once.
import { toEntry, type Entry, type Held } from '../chat/reconcile';
import { MAX_PAGES as WINDOW_PAGES } from '../chat/window';

/** ExportMeta is what the writer says of the whole conversation. */
export interface ExportMeta {
  title: string;
  conversationId: string;
  startedAt?: string;
  entries: number;
  pages: number;
  problems: number;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** readMeta parses the writer's meta block; a missing or damaged one reads as empty. */
export function readMeta(text: string | null | undefined): ExportMeta {
  let v: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text ?? '{}');
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) v = parsed as Record<string, unknown>;
  } catch {
    // An empty meta still shows the pages.
  }
  const m: ExportMeta = { title: str(v.title), conversationId: str(v.conversationId), entries: num(v.entries), pages: num(v.pages), problems: num(v.problems) };
  if (str(v.startedAt)) m.startedAt = str(v.startedAt);
  return m;
}

/** parsePage reads one page's entries, dropping anything that is not an entry. */
export function parsePage(text: string | null | undefined): Entry[] {
  let v: unknown;
  try {
    v = JSON.parse(text ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: Entry[] = [];
  for (const x of v) {
    const e = toEntry(x);
    if (e) out.push(e);
  }
  return out;
}

/**
 * groupEntries cuts a page into display groups by the page index's turn
 * rule: a user entry is a group of its own, and the entries after it up to
 * the next user entry are one group (the reply). The writer starts every
 * page at a group's start, so grouping a page alone groups as the whole.
 */
export function groupEntries(entries: readonly Entry[]): Held[][] {
  const groups: Held[][] = [];
  let prevUser = true;
  for (const entry of entries) {
    const user = entry.content.kind === 'user';
    // As a page of the web app holds it: settled or not is not known.
    const h: Held = { entry, revision: 0 };
    if (groups.length === 0 || user || prevUser) groups.push([h]);
    else groups[groups.length - 1]!.push(h);
    prevUser = user;
  }
  return groups;
}

/**
 * The most pages shown at once, as many as the web app's window holds (the
 * writer's pages are its page budget, 64 KiB): older ones are dropped as
 * later ones come, and back.
 */
export const MAX_PAGES = WINDOW_PAGES;

/** PageWindow is the run of pages shown: lo up to, not including, hi. */
export interface PageWindow {
  lo: number;
  hi: number;
}

/** latestWindow shows the last page of n, as the web app opens at the latest. */
export function latestWindow(n: number): PageWindow {
  return { lo: Math.max(0, n - 1), hi: n };
}

/** earlier adds the page before the window, dropping the last one beyond max. */
export function earlier(w: PageWindow, max = MAX_PAGES): PageWindow {
  if (w.lo === 0) return w;
  const lo = w.lo - 1;
  return { lo, hi: Math.min(w.hi, lo + max) };
}

/** later adds the page after the window (of n), dropping the first one beyond max. */
export function later(w: PageWindow, n: number, max = MAX_PAGES): PageWindow {
  if (w.hi >= n) return w;
  const hi = w.hi + 1;
  return { lo: Math.max(w.lo, hi - max), hi };
}
