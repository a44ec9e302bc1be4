// TranscriptView drives one window (window.ts) over the protocol: it opens a
// snapshot, asks for pages one at a time, retries failures with exponential
// backoff, applies live events, and carries the reader's intents (jump to the
// latest, restore a saved position). React reads it through subscribe and
// getState (useSyncExternalStore).
import type { QueueItem as FrameQueueItem } from '../protocol/frames';
import { DisconnectedError, ProtocolError, type Client, type ServerFrame } from '../protocol/client';
import type { EntryAnswer, EventFrame, Open, PageRequest } from '../protocol/frames';
import { appendText, toEntry, type Entry, type Held } from './reconcile';
import { groupMessage, holds } from './rows';
import type { Message } from './types';
import { atEnd, edgeAnchors, emptyWindow, groupsOf, reduceWindow, type Direction, type WindowAction, type WindowState, type WirePage } from './window';

/** Page size asked of the server. Six of them stay well inside the 8 MiB budget. */
export const PAGE_BUDGET = 64 * 1024;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 15_000;

/** A saved reading position: a message ID and its offset from the viewport top. */
export interface Anchor {
  id: string;
  offset: number;
}

export type IntentKind = 'jump' | 'restore';

export interface ViewState {
  window: WindowState;
  rows: Message[];
  /** A request is in flight. */
  loading: boolean;
  /** The last request failed; a retry is scheduled. */
  failed: boolean;
  /** A pending jump or restore the reader asked for. */
  intent?: IntentKind;
  /** The last jump failed (the jump control stays available). */
  jumpFailed: boolean;
  /** The turn the server says is running. */
  turn?: { turn?: string; reply?: string };
  queue: QueueItem[];
  approvals: Approval[];
  deleted: boolean;
  /** The server has no such conversation: the view asks nothing more. */
  missing: boolean;
  /** The view's window was replaced (new generation, jump, restore): anchoring must not carry over. */
  replacedAt: number;
  /** A message to bring to the top of the viewport (after a branch switch); n changes per request. */
  focus?: { id: string; n: number };
}

/** A tool call waiting for the user's decision. */
export interface Approval {
  invocationId: string;
  tool: string;
  args: string;
  child?: string;
}

/** A send waiting behind the running turn, as the protocol describes it. */
export type QueueItem = FrameQueueItem;

type RowCacheEntry = { held: Held[]; running: boolean; msg: Message };

export class TranscriptView {
  private state: ViewState;
  private listeners = new Set<() => void>();
  private inflight = false;
  private failures = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private visible = true;
  private disposed = false;
  private opened = -1; // the client's connect count this view's snapshot belongs to
  private rowCache = new Map<string, RowCacheEntry>();
  private intentPromise?: Promise<void>;
  /** Live events that arrived before the window's first page. */
  private early: EventFrame[] = [];
  private unsub: (() => void)[] = [];
  /** Pages fetched (for tests): a reload of an evicted page counts again. */
  fetches = 0;
  /** The head the current snapshot reads (the selected one when this.head is unset). */
  private snapHead?: string;
  /** A message the next window should be opened around (focusOn before the new snapshot). */
  private focusId?: string;
  /** An open in flight, and whether a head or replaced event asked for another one meanwhile. */
  private opening = false;
  private reopen = false;
  /** Entries whose checkpoint was asked for after a gap; their appends wait for it. */
  private fetching = new Set<string>();

  constructor(
    private readonly client: Client,
    readonly conversation: string,
    readonly head?: string,
  ) {
    this.state = {
      window: emptyWindow(),
      rows: [],
      loading: false,
      failed: false,
      jumpFailed: false,
      queue: [],
      approvals: [],
      deleted: false,
      missing: false,
      replacedAt: 0,
    };
    this.unsub.push(client.onEvent((f) => this.onEvent(f)));
    this.unsub.push(
      client.onStatus((s) => {
        if (s === 'open') {
          // Connectivity is back: resume at once, without the old retry delay.
          clearTimeout(this.retryTimer);
          this.retryTimer = undefined;
          this.failures = 0;
          void this.ensureOpen();
        }
      }),
    );
    if (client.status === 'open') void this.ensureOpen();
  }

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  getState = (): ViewState => this.state;

  get busy(): boolean {
    return this.inflight;
  }

  private set(patch: Partial<ViewState>) {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  private dispatch(a: WindowAction, extra: Partial<ViewState> = {}) {
    const w = reduceWindow(this.state.window, a);
    if (w === this.state.window && Object.keys(extra).length === 0) return;
    this.set({ ...extra, window: w, rows: w === this.state.window ? this.state.rows : this.buildRows(w) });
  }

  /** buildRows maps the window's groups onto rows, reusing unchanged ones. */
  private buildRows(w: WindowState): Message[] {
    const groups = groupsOf(w);
    const rows: Message[] = [];
    const keep = new Map<string, RowCacheEntry>();
    const running = this.state.turn;
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      const held = g.ids.map((id) => w.held.get(id)).filter((h): h is Held => h !== undefined);
      const last = i === groups.length - 1 && atEnd(w);
      const isRunning = held.some((h) => h.open === true) || (last && running !== undefined && held[0]?.entry.content.kind !== 'user');
      const key = g.ids[0]!;
      const prev = this.rowCache.get(key);
      let msg: Message | undefined;
      if (prev && prev.running === isRunning && prev.held.length === held.length && prev.held.every((h, k) => h === held[k])) {
        msg = prev.msg;
        keep.set(key, prev);
      } else {
        msg = groupMessage(held, isRunning);
        if (msg) keep.set(key, { held, running: isRunning, msg });
      }
      if (msg) rows.push(msg);
    }
    // A turn that started and has no reply yet shows the empty reply.
    const lastRow = rows[rows.length - 1];
    if (atEnd(w) && lastRow?.role === 'user') {
      const lastHeld = w.held.get(lastRow.id);
      const live = w.live.has(lastRow.id) || (running !== undefined && running.turn === lastRow.id);
      if (live && lastHeld) rows.push({ id: `pending-${lastRow.id}`, role: 'assistant', state: 'streaming', segments: [] });
    }
    this.rowCache = keep;
    return rows;
  }

  /** setVisible stops (false) or resumes (true) automatic requests. */
  setVisible(v: boolean) {
    this.visible = v;
  }

  private async ensureOpen(): Promise<void> {
    if (this.state.missing) return;
    if (this.disposed || this.client.status !== 'open' || this.opened === this.client.connects) return;
    if (this.opening) {
      // A replaced and a head event arrive together: one open at a time, and
      // one more after it if something changed while it was on its way.
      this.reopen = true;
      return;
    }
    this.opened = this.client.connects;
    this.opening = true;
    try {
      await this.openSnapshot();
    } finally {
      this.opening = false;
    }
    if (this.reopen) {
      this.reopen = false;
      this.opened = -1;
      await this.ensureOpen();
      return;
    }
    // A focus asked for while this open was already reading the latest page.
    if (this.focusId !== undefined && this.state.window.token) this.focusOn(this.focusId);
  }

  private async openSnapshot(): Promise<void> {
    const w = this.state.window;
    const frame: Open = { type: 'open', conversation: this.conversation };
    if (this.head) frame.head = this.head;
    if (w.generation >= 0 && w.loaded) frame.since = { generation: w.generation, seq: w.seq };
    let snap: ServerFrame;
    try {
      snap = await this.client.request(frame);
    } catch (e) {
      if (e instanceof ProtocolError && e.code === 'not-found') {
        // No such conversation: say so and stop asking (a `deleted` or a
        // reconnect does not bring it back; opening its link again does).
        clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
        this.set({ missing: true, loading: false, failed: false });
        return;
      }
      this.opened = -1;
      this.fail(e, () => void this.ensureOpen());
      return;
    }
    if (typeof snap.head === 'string') this.snapHead = snap.head;
    const cp = snap.checkpoint as { replaced?: boolean; entries?: { entry: Entry; revision: number; open?: boolean; after?: string }[] } | undefined;
    const generation = Number(snap.generation);
    if (cp?.replaced || (w.generation >= 0 && generation !== w.generation)) {
      this.dispatch({ type: 'replaced' }, { replacedAt: this.state.replacedAt + 1 });
    }
    this.dispatch({ type: 'snapshot', token: String(snap.token), generation, seq: Number(snap.seq), groups: Number(snap.groups) });
    for (const c of cp?.entries ?? []) {
      this.dispatch({ type: 'entry', how: c.open === false ? 'settle' : 'running', entry: c.entry, revision: c.revision, open: c.open, after: c.after, seq: c.revision });
    }
    // The engine's control state at capture: the running turn, the queue, approvals.
    const st = snap.state as { turn?: { state?: string; turn?: string; reply?: string }; queue?: QueueItem[]; approvals?: Approval[] } | undefined;
    if (st) {
      this.state = {
        ...this.state,
        turn: st.turn?.state === 'running' ? { turn: st.turn.turn, reply: st.turn.reply } : undefined,
        queue: st.queue ?? [],
        approvals: st.approvals ?? [],
      };
    }
    this.failures = 0;
    this.set({ failed: false, rows: this.buildRows(this.state.window) });
    if (!this.state.window.loaded) {
      // One request at a time: an answer of the old window still on its way
      // is dropped by epoch; wait it out instead of skipping the first page.
      while (this.inflight) await new Promise((r) => setTimeout(r, 10));
      if (this.disposed || this.state.window.loaded) return;
      const f = this.focusId;
      this.focusId = undefined;
      if (f !== undefined && (await this.load({ around: f }))) this.focused(f);
      else if (!this.state.window.loaded) await this.load('latest');
    }
  }

  /**
   * focusOn keeps the reader at a message after a branch switch: the window
   * is opened (or replaced) around it, and the transcript puts it at the top.
   * Called before the new head's snapshot exists, it waits for that snapshot;
   * an answer of the old window arriving meanwhile is dropped by epoch.
   */
  focusOn(id: string): void {
    if (this.disposed) return;
    const w = this.state.window;
    if (w.loaded && this.state.rows.some((r) => holds(r, id))) {
      this.focused(id);
      return;
    }
    this.focusId = id;
    if (!w.token || this.opening) return; // the next snapshot opens around it
    void this.startIntent('restore', async () => {
      const ok = await this.load({ around: id });
      if (ok && this.focusId === id) this.focused(id);
      return ok;
    });
  }

  // focused scrolls to the row that shows entry id (the entry's own row,
  // or the reply that holds an answer or a step a search hit names).
  private focused(id: string) {
    if (this.focusId === id) this.focusId = undefined;
    const row = this.state.rows.find((r) => holds(r, id));
    if (!row) return;
    this.set({ focus: { id: row.id, n: (this.state.focus?.n ?? 0) + 1 } });
  }

  /**
   * want asks for the page on one side, if the window has more there and no
   * request is in flight. Invisible views ask for nothing.
   */
  want(direction: Direction): void {
    const w = this.state.window;
    if (!this.visible || this.inflight || this.disposed || this.state.intent || this.retryTimer !== undefined) return;
    if (direction === 'before' ? !w.hasMoreBefore : !w.hasMoreAfter) return;
    if (direction === 'after' && w.stale && !w.hasMoreAfter) return;
    void this.load(direction);
  }

  /** load fetches one page; 'latest' and 'around' replace the window. */
  private async load(what: Direction | 'latest' | { around: string }): Promise<boolean> {
    const w = this.state.window;
    if (!w.token || this.inflight) return false;
    const anchors = edgeAnchors(w);
    let anchor: string;
    let direction: PageRequest['direction'];
    if (what === 'latest') [anchor, direction] = ['latest', 'before'];
    else if (typeof what === 'object') [anchor, direction] = [what.around, 'around'];
    else {
      const a = what === 'before' ? anchors.before : anchors.after;
      if (!a) return false;
      [anchor, direction] = [a, what];
    }
    const epoch = w.epoch;
    const token = w.token;
    this.inflight = true;
    this.set({ loading: true });
    try {
      const f = await this.client.request({
        type: 'page',
        token,
        conversation: this.conversation,
        head: this.headOf(),
        anchor,
        direction,
        budgetBytes: PAGE_BUDGET,
      });
      this.fetches++;
      this.inflight = false;
      this.failures = 0;
      const page: WirePage = f;
      this.dispatch(
        { type: 'page', epoch, token, direction: typeof what === 'string' && what !== 'latest' ? what : 'replace', page },
        { loading: false, failed: false },
      );
      if (this.early.length > 0 && this.state.window.loaded) {
        // Events held while the first page was on its way: those the capture
        // already reflects (seq at or below its seq) are dropped.
        const early = this.early.splice(0).filter((e) => Number(e.seq) > this.state.window.captureSeq);
        for (const e of early) this.onEvent(e);
      }
      return this.state.window.epoch === epoch;
    } catch (e) {
      this.inflight = false;
      this.set({ loading: false });
      this.fail(e, () => {
        if (typeof what === 'string' && what !== 'latest') this.want(what);
      });
      return false;
    }
  }

  private headOf(): string {
    // A page names the head its token reads: after a switch that is the new
    // selected head, not main.
    return this.head ?? this.snapHead ?? 'main';
  }

  /** fail schedules a retry with exponential backoff; a token error re-opens at once. */
  private fail(e: unknown, retry: () => void) {
    if (this.disposed) return;
    if (e instanceof ProtocolError && e.rebuild) {
      this.opened = -1;
      void this.ensureOpen();
      return;
    }
    if (e instanceof DisconnectedError) return; // the reconnect resumes
    const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** this.failures);
    this.failures++;
    this.set({ failed: true });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      retry();
    }, delay);
  }

  /**
   * jumpToLatest replaces the window with the conversation's latest page.
   * Repeated calls while one is pending share it. A window that missed live
   * appends re-opens a snapshot first.
   */
  jumpToLatest(): Promise<void> {
    if (this.state.intent === 'jump' && this.intentPromise) return this.intentPromise;
    return this.startIntent('jump', async () => {
      if (this.state.window.stale) {
        this.opened = -1;
        await this.ensureOpen();
      }
      return this.load('latest');
    });
  }

  /** restore brings a saved anchor's message into the window (around it). */
  restore(anchor: Anchor): Promise<void> {
    if (this.state.rows.some((r) => r.id === anchor.id)) return Promise.resolve();
    return this.startIntent('restore', () => this.load({ around: anchor.id }));
  }

  private startIntent(kind: IntentKind, run: () => Promise<boolean>): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.dispatch({ type: 'bump' }, { intent: kind, jumpFailed: false });
    const epoch = this.state.window.epoch;
    const wait = async () => {
      // One request at a time: wait out a page already in flight.
      while (this.inflight) await new Promise((r) => setTimeout(r, 10));
      if (this.state.window.epoch !== epoch || this.state.intent !== kind) return;
      const ok = await run();
      if (this.state.intent !== kind) return; // cancelled meanwhile
      this.set({ intent: undefined, jumpFailed: !ok && kind === 'jump', replacedAt: ok ? this.state.replacedAt + 1 : this.state.replacedAt });
    };
    const p = wait().finally(() => {
      if (this.intentPromise === p) this.intentPromise = undefined;
    });
    this.intentPromise = p;
    return p;
  }

  /** cancelIntent drops a pending jump or restore: its answer will not move the view. */
  cancelIntent(): void {
    if (!this.state.intent) return;
    this.dispatch({ type: 'bump' }, { intent: undefined });
  }

  private onEvent(frame: ServerFrame) {
    if (frame.type !== 'event' || frame.conversation !== this.conversation) return;
    const f: EventFrame = frame;
    const w = this.state.window;
    const gen = f.generation;
    switch (f.op) {
      case 'upsert':
      case 'settle': {
        if (gen !== w.generation && w.generation >= 0) return;
        if (!w.loaded) {
          // The window's first page is on its way: apply these after it, in order.
          this.early.push(f);
          return;
        }
        const entry = toEntry(f.entry);
        if (!entry) return; // the server checks entries against the schema; a broken one is dropped, not guessed at
        this.dispatch({
          type: 'entry',
          how: f.op === 'settle' ? 'settle' : 'running',
          entry,
          revision: f.revision,
          open: f.op === 'settle' ? false : f.open,
          after: f.after,
          seq: f.seq,
        });
        break;
      }
      case 'append': {
        // Streaming text: the appended text, against the revision the tab
        // must hold. After a gap or a mismatch the tab asks for that one
        // entry's checkpoint; appends of it that arrive before the answer
        // are older than the answer, so they are dropped.
        if (gen !== w.generation && w.generation >= 0) return;
        if (!w.loaded) {
          this.early.push(f);
          return;
        }
        if (this.fetching.has(f.entryId)) return;
        const held = w.held.get(f.entryId);
        const grown = held && held.open !== false && held.revision === f.base ? appendText(held.entry, f.offset, f.text) : undefined;
        if (!held || !grown) {
          void this.fetchEntry(f.entryId, gen);
          return;
        }
        this.dispatch({ type: 'entry', how: 'running', entry: grown, revision: f.revision, open: true, seq: f.seq });
        break;
      }
      case 'presentation': {
        const held = w.held.get(f.entryId);
        if (!held || gen !== w.generation) return;
        if (held.open === false) return; // closed: its settle replaced the live value
        this.dispatch({ type: 'entry', how: 'running', entry: held.entry, revision: f.revision, open: true, seq: f.seq, live: f.presentation });
        break;
      }
      case 'replaced':
      case 'head':
        this.rebuild();
        break;
      case 'queue':
        this.set({ queue: (f.items as QueueItem[]) ?? [] });
        break;
      case 'approvals':
        this.set({ approvals: (f.approvals as Approval[]) ?? [] });
        break;
      case 'turn': {
        const turn = f.state === 'running' ? { turn: f.turn, reply: f.reply } : undefined;
        const was = this.state.turn;
        // A running turn's event comes at each change of its activity
        // (thinking, a tool, streaming); the rows depend only on which turn
        // runs and its reply, so an event that changes neither keeps them.
        if (was?.turn === turn?.turn && was?.reply === turn?.reply) break;
        this.state = { ...this.state, turn };
        this.set({ rows: this.buildRows(this.state.window) });
        break;
      }
      case 'deleted':
        this.set({ deleted: true });
        break;
    }
  }

  /**
   * fetchEntry asks the server for one entry's current value after a gap in
   * its live events and applies it like an upsert or settle. The answer
   * comes in order with the events, so it is at least as new as anything
   * received before it. A failure, or an answer of another generation,
   * opens the conversation again.
   */
  private async fetchEntry(entryId: string, generation: number): Promise<void> {
    this.fetching.add(entryId);
    let a: EntryAnswer;
    try {
      a = await this.client.request({ type: 'entry', conversation: this.conversation, entryId });
    } catch (e) {
      this.fetching.delete(entryId);
      if (e instanceof DisconnectedError) return; // the reconnect resumes
      this.rebuild();
      return;
    } finally {
      this.fetchedEntries++;
    }
    this.fetching.delete(entryId);
    if (this.disposed) return;
    const w = this.state.window;
    if (a.generation !== generation || a.generation !== w.generation) {
      this.rebuild();
      return;
    }
    const entry = toEntry(a.entry);
    if (!entry) {
      this.rebuild();
      return;
    }
    this.dispatch({
      type: 'entry',
      how: a.open ? 'running' : 'settle',
      entry,
      revision: a.revision,
      open: a.open,
      after: a.after,
      seq: a.seq,
    });
  }

  /** Entry checkpoints asked for after a gap (for tests). */
  fetchedEntries = 0;

  /** rebuild drops the window and opens a fresh snapshot. */
  private rebuild() {
    this.early = [];
    this.dispatch({ type: 'replaced' }, { replacedAt: this.state.replacedAt + 1 });
    this.opened = -1;
    void this.ensureOpen();
  }

  /** dispose releases the snapshot and stops listening. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.retryTimer);
    for (const u of this.unsub) u();
    const token = this.state.window.token;
    if (token && this.client.status === 'open') void this.client.request({ type: 'release', token }).catch(() => {});
    this.rowCache.clear();
    this.listeners.clear();
  }
}
