// The bounded window over one loaded transcript: a pure reducer.
//
// A window is a run of contiguous pages of display groups from one snapshot,
// plus a live tail of groups that arrived after the snapshot was captured. It
// holds at most MAX_PAGES ordinary pages and MAX_BYTES of content; a single
// page larger than the budget (one huge turn) is kept alone. Loading a page on
// one side evicts pages from the other side, the side away from the reader.
// Eviction only forgets the client's copy: the records stay in the log and
// come back when the reader scrolls there again. Entries that received live
// updates are never forgotten.
//
// Every request is made under an epoch. Replacing the window (a new
// generation, a jump to the latest, a restore) bumps it, so a response asked
// for under an older epoch cannot overwrite the newer window.
import type { Group as FrameGroup, Page as PageAnswer } from '../protocol/frames';
import { mergeGroup, reconcile, type Entry, type Held, type Observation } from './reconcile';

export const MAX_PAGES = 6;
export const MAX_BYTES = 8 * 1024 * 1024;

/** A display group as the window keeps it: its snapshot index and entry IDs. */
export interface GroupRef {
  index: number;
  bytes: number;
  ids: readonly string[];
}

export interface Page {
  first: number;
  last: number;
  bytes: number;
  groups: readonly GroupRef[];
}

/** A group as a page frame carries it (the protocol schema's group). */
export type WireGroup = Omit<FrameGroup, 'entries'> & { entries: Entry[] };

/** What a window takes of a page answer. */
export type WirePage = Pick<PageAnswer, 'first' | 'last' | 'hasMoreBefore' | 'hasMoreAfter'> & { groups: WireGroup[] };

export interface WindowState {
  epoch: number;
  token?: string;
  generation: number;
  /** The seq of the snapshot the pages come from. */
  captureSeq: number;
  /** The highest seq applied (capture or event). */
  seq: number;
  groupCount: number;
  pages: readonly Page[];
  hasMoreBefore: boolean;
  hasMoreAfter: boolean;
  /** Live groups after the snapshot's end, shown once the window reaches it. */
  tail: readonly GroupRef[];
  held: ReadonlyMap<string, Held>;
  /** Entry IDs that received live updates, and their group's IDs: kept through eviction. */
  live: ReadonlyMap<string, readonly string[]>;
  /** Live appends the window could not place: the next read of the end needs a new snapshot. */
  stale: boolean;
  /** Pages evicted so far (for tests and the bench). */
  evictions: number;
  /** The first page of this window has been answered (it may have been empty). */
  loaded: boolean;
}

export type Direction = 'before' | 'after';

export type WindowAction =
  | { type: 'snapshot'; token: string; generation: number; seq: number; groups: number }
  | { type: 'page'; epoch: number; token: string; direction: Direction | 'replace'; page: WirePage }
  | { type: 'bump' }
  | { type: 'replaced' }
  | {
      type: 'entry';
      how: Exclude<Observation, 'page'>;
      entry: Entry;
      revision: number;
      open?: boolean;
      after?: string;
      seq: number;
      /** A presentation event's live value (see Held.live). */
      live?: unknown;
    };

export function emptyWindow(): WindowState {
  return {
    epoch: 0,
    generation: -1,
    captureSeq: 0,
    seq: 0,
    groupCount: 0,
    pages: [],
    hasMoreBefore: false,
    hasMoreAfter: false,
    tail: [],
    held: new Map(),
    live: new Map(),
    stale: false,
    evictions: 0,
    loaded: false,
  };
}

export function windowBytes(w: Pick<WindowState, 'pages'>): number {
  return w.pages.reduce((n, p) => n + p.bytes, 0);
}

/** groupsOf lists the window's groups in order; the tail follows once the end is loaded. */
export function groupsOf(w: WindowState): GroupRef[] {
  const out: GroupRef[] = [];
  for (const p of w.pages) out.push(...p.groups);
  if (!w.hasMoreAfter) {
    const seen = new Set(out.map((g) => g.ids[0]));
    for (const g of w.tail) if (!seen.has(g.ids[0])) out.push(g);
  }
  return out;
}

/** atEnd reports whether the window shows the conversation's latest group. */
export function atEnd(w: WindowState): boolean {
  return !w.hasMoreAfter && w.loaded;
}

const utf8 = new TextEncoder();

function groupBytes(g: WireGroup): number {
  // Every page group states its stored size (protocol v2), the figure the
  // server budgets pages with, so the window counts the same bytes. A frame
  // without it is measured exactly (UTF-8), never guessed.
  return typeof g.bytes === 'number' && g.bytes > 0 ? g.bytes : utf8.encode(JSON.stringify(g)).length;
}

/** forget drops evicted groups' entries from held, except live-updated ones. */
function forget(held: Map<string, Held>, live: ReadonlyMap<string, readonly string[]>, pages: readonly Page[]) {
  for (const p of pages) for (const g of p.groups) for (const id of g.ids) if (!live.has(id)) held.delete(id);
}

function reducePage(w: WindowState, a: Extract<WindowAction, { type: 'page' }>): WindowState {
  if (a.epoch !== w.epoch || a.token !== w.token) return w; // asked under an older window
  const page = a.page;
  const held = new Map(w.held);
  const replacing = a.direction === 'replace' || w.pages.length === 0;
  if (replacing) forget(held, w.live, w.pages);
  const groups: GroupRef[] = page.groups.map((g) => {
    const pageIds = g.entries.map((e) => e.id);
    for (const e of g.entries) {
      held.set(e.id, reconcile(held.get(e.id), { entry: e, revision: w.captureSeq }, 'page'));
    }
    // Live entries of this group the capture did not have stay, in place.
    const liveIds = w.live.get(pageIds[0] ?? '') ?? [];
    return { index: g.index, bytes: groupBytes(g), ids: mergeGroup(pageIds, liveIds) };
  });
  if (groups.length === 0) {
    // An empty page: nothing more on that side.
    if (a.direction === 'before') return { ...w, hasMoreBefore: false };
    if (a.direction === 'after') return { ...w, hasMoreAfter: false };
    return { ...w, pages: [], hasMoreBefore: false, hasMoreAfter: false, held, loaded: true };
  }
  const loaded = new Set(groups.map((g) => g.ids[0]));
  const tail = w.tail.filter((g) => !loaded.has(g.ids[0]));
  const fresh: Page = {
    first: groups[0]!.index,
    last: groups[groups.length - 1]!.index,
    bytes: groups.reduce((n, g) => n + g.bytes, 0),
    groups,
  };
  let pages: Page[];
  let hasMoreBefore = w.hasMoreBefore;
  let hasMoreAfter = w.hasMoreAfter;
  if (replacing) {
    pages = [fresh];
    hasMoreBefore = page.hasMoreBefore;
    hasMoreAfter = page.hasMoreAfter;
  } else if (a.direction === 'before') {
    if (fresh.last !== w.pages[0]!.first - 1) return w; // not adjacent: a response for another position
    pages = [fresh, ...w.pages];
    hasMoreBefore = page.hasMoreBefore;
  } else {
    if (fresh.first !== w.pages[w.pages.length - 1]!.last + 1) return w;
    pages = [...w.pages, fresh];
    hasMoreAfter = page.hasMoreAfter;
  }
  // Evict on the side away from the page just read.
  let evictions = w.evictions;
  const overBudget = () => pages.length > MAX_PAGES || (pages.length > 1 && pages.reduce((n, p) => n + p.bytes, 0) > MAX_BYTES);
  while (overBudget()) {
    const fromEnd = a.direction === 'before';
    const gone = fromEnd ? pages.pop()! : pages.shift()!;
    forget(held, w.live, [gone]);
    if (fromEnd) hasMoreAfter = true;
    else hasMoreBefore = true;
    evictions++;
  }
  return { ...w, pages, hasMoreBefore, hasMoreAfter, held, evictions, tail, loaded: true };
}

function findGroup(w: WindowState, id: string): { list: 'pages' | 'tail'; page: number; group: number } | undefined {
  for (let p = 0; p < w.pages.length; p++) {
    const gs = w.pages[p]!.groups;
    for (let g = 0; g < gs.length; g++) if (gs[g]!.ids.includes(id)) return { list: 'pages', page: p, group: g };
  }
  for (let g = 0; g < w.tail.length; g++) if (w.tail[g]!.ids.includes(id)) return { list: 'tail', page: -1, group: g };
  return undefined;
}

function reduceEntry(w: WindowState, a: Extract<WindowAction, { type: 'entry' }>): WindowState {
  const prev = w.held.get(a.entry.id);
  const next = reconcile(prev, { entry: a.entry, revision: a.revision, open: a.open, live: a.live }, a.how);
  const seq = Math.max(w.seq, a.seq);
  if (prev && next === prev) return seq === w.seq ? w : { ...w, seq };
  const held = new Map(w.held);
  held.set(a.entry.id, next);
  const live = new Map(w.live);
  let state: WindowState = { ...w, held, live, seq };
  const where = findGroup(w, a.entry.id);
  if (where) {
    // An update in place: remember the group so eviction keeps it.
    const g = where.list === 'pages' ? w.pages[where.page]!.groups[where.group]! : w.tail[where.group]!;
    for (const id of g.ids) live.set(id, g.ids);
    return state;
  }
  // A new entry: place it after the entry it follows.
  const after = a.after === undefined ? undefined : findGroup(w, a.after);
  const isUser = a.entry.content.kind === 'user';
  const lastIndex = (): number => {
    const t = w.tail[w.tail.length - 1];
    const p = w.pages[w.pages.length - 1];
    return Math.max(t?.index ?? -1, p?.last ?? -1, w.groupCount - 1);
  };
  if (!after) {
    if (a.after === undefined && w.groupCount === 0 && w.tail.length === 0) {
      // The very first entry of an empty conversation.
      const g: GroupRef = { index: 0, bytes: JSON.stringify(a.entry).length * 2, ids: [a.entry.id] };
      live.set(a.entry.id, g.ids);
      return { ...state, tail: [g] };
    }
    // It follows something outside the window: keep it; the next read of the
    // conversation's end opens a new snapshot that has it.
    live.set(a.entry.id, [a.entry.id]);
    return { ...state, stale: true };
  }
  const bytes = JSON.stringify(a.entry).length * 2;
  const src = after.list === 'pages' ? w.pages[after.page]!.groups[after.group]! : w.tail[after.group]!;
  const isLastGroup =
    after.list === 'tail'
      ? after.group === w.tail.length - 1
      : after.page === w.pages.length - 1 &&
        after.group === w.pages[after.page]!.groups.length - 1 &&
        !w.hasMoreAfter &&
        w.tail.length === 0;
  // A user entry is a group by itself: anything after it starts a new group.
  const afterUser = w.held.get(src.ids[0]!)?.entry.content.kind === 'user';
  if (isUser || afterUser) {
    if (!isLastGroup) return { ...state, stale: true };
    const g: GroupRef = { index: lastIndex() + 1, bytes, ids: [a.entry.id] };
    live.set(a.entry.id, g.ids);
    return { ...state, tail: [...w.tail, g] };
  }
  const pos = src.ids.indexOf(a.after!);
  const ids = [...src.ids.slice(0, pos + 1), a.entry.id, ...src.ids.slice(pos + 1)];
  const grown: GroupRef = { index: src.index, bytes: src.bytes + bytes, ids };
  for (const id of ids) live.set(id, ids);
  if (after.list === 'tail') {
    const tail = [...w.tail];
    tail[after.group] = grown;
    return { ...state, tail };
  }
  const pages = [...w.pages];
  const pg = pages[after.page]!;
  const groups = [...pg.groups];
  groups[after.group] = grown;
  pages[after.page] = { ...pg, groups, bytes: pg.bytes + bytes };
  state = { ...state, pages };
  return state;
}

/** reduceWindow applies one action to a window. It never mutates its input. */
export function reduceWindow(w: WindowState, a: WindowAction): WindowState {
  switch (a.type) {
    case 'snapshot':
      if (a.generation === w.generation && w.loaded) {
        // A new capture of the same document (reconnect, an expired token, or
        // reading past live appends): group indices are stable, so the window
        // stays and only the token changes. Groups the capture has beyond the
        // window are more to read, unless the live tail already shows them.
        const lastLoaded = w.pages[w.pages.length - 1]?.last ?? -1;
        const beyond = a.groups - 1 - lastLoaded;
        const hasMoreAfter = w.hasMoreAfter || w.stale ? beyond > 0 : beyond > w.tail.length;
        return { ...w, token: a.token, captureSeq: a.seq, seq: Math.max(w.seq, a.seq), groupCount: a.groups, stale: false, epoch: w.epoch + 1, hasMoreAfter };
      }
      return { ...emptyWindow(), epoch: w.epoch + 1, evictions: w.evictions, token: a.token, generation: a.generation, captureSeq: a.seq, seq: a.seq, groupCount: a.groups };
    case 'page':
      return reducePage(w, a);
    case 'bump':
      return { ...w, epoch: w.epoch + 1 };
    case 'replaced':
      return { ...emptyWindow(), epoch: w.epoch + 1, evictions: w.evictions };
    case 'entry':
      return reduceEntry(w, a);
  }
}

/** The first entry ID of the window's first and last groups: the anchors of the next pages. */
export function edgeAnchors(w: WindowState): { before?: string; after?: string } {
  const first = w.pages[0]?.groups[0];
  const lastPage = w.pages[w.pages.length - 1];
  const last = lastPage?.groups[lastPage.groups.length - 1];
  return { before: first?.ids[0], after: last?.ids[0] };
}
