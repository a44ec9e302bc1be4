// Branches of one conversation as a pane sees them: the selected head, its
// alternatives (where an edited message has siblings), and the edit drafts
// the reader is writing. The state is a pure reducer (reduceBranches, tested
// on its own); BranchController does the I/O around it: metadata reads, the
// `edit` and `select-branch` commands, and telling the transcript view where
// to keep the reader after a switch. Everything runs on the page's one
// thread; a controller belongs to one pane and is disposed with it.
import type { Client, ServerFrame } from '../protocol/client';
import { ProtocolError } from '../protocol/client';
import type { Edit, SelectBranch } from '../protocol/frames';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A branch as metadata and the graph describe it (docs/protocol.md). */
export interface Branch {
  head: string;
  label: string;
  forkedFrom?: string;
  after?: string;
  createdAt?: string;
}

/** A place in the selected head with sibling branches: the row entryId draws ‹ index+1/heads.length ›. */
export interface Alternative {
  entryId: string;
  heads: string[];
  index: number;
}

/** The branch part of a conversation's metadata. */
export interface BranchMeta {
  head: string;
  branches: Branch[];
  alternatives: Alternative[];
}

/** An edit the reader is writing or sending; it lives here so a row that scrolls out of view keeps it. */
export interface EditDraft {
  text: string;
  sending: boolean;
  /** Why the last attempt did not go through (the draft stays). */
  error?: string;
}

export interface BranchState {
  meta?: BranchMeta;
  /** Edits in progress, by the edited user entry's ID. */
  edits: Readonly<Record<string, EditDraft>>;
  /** A select-branch in flight: the head asked for. */
  switching?: string;
  /** Why the last switch did not happen. */
  notice?: string;
}

export type BranchAction =
  | { type: 'meta'; meta: BranchMeta }
  | { type: 'edit-start'; entryId: string; text: string }
  | { type: 'edit-change'; entryId: string; text: string }
  | { type: 'edit-cancel'; entryId: string }
  | { type: 'edit-sending'; entryId: string }
  | { type: 'edit-failed'; entryId: string; error: string }
  | { type: 'edit-done'; entryId: string }
  | { type: 'switch-start'; head: string }
  | { type: 'switch-done' }
  | { type: 'switch-failed'; error: string }
  | { type: 'dismiss' };

export const emptyBranches: BranchState = { edits: {} };

function withEdit(s: BranchState, id: string, d: EditDraft | undefined): BranchState {
  const edits = { ...s.edits };
  if (d) edits[id] = d;
  else delete edits[id];
  return { ...s, edits };
}

/** reduceBranches is the branch state's only writer. A draft is dropped only by cancel or a delivered edit. */
export function reduceBranches(s: BranchState, a: BranchAction): BranchState {
  const cur = 'entryId' in a ? s.edits[a.entryId] : undefined;
  switch (a.type) {
    case 'meta':
      return { ...s, meta: a.meta };
    case 'edit-start':
      // Opening an editor that is already open keeps what was typed.
      return cur ? s : withEdit(s, a.entryId, { text: a.text, sending: false });
    case 'edit-change':
      return cur && !cur.sending ? withEdit(s, a.entryId, { ...cur, text: a.text, error: undefined }) : s;
    case 'edit-cancel':
      return cur && !cur.sending ? withEdit(s, a.entryId, undefined) : s;
    case 'edit-sending':
      return cur ? withEdit(s, a.entryId, { ...cur, sending: true, error: undefined }) : s;
    case 'edit-failed':
      return cur ? withEdit(s, a.entryId, { ...cur, sending: false, error: a.error }) : s;
    case 'edit-done':
      return withEdit(s, a.entryId, undefined);
    case 'switch-start':
      return { ...s, switching: a.head, notice: undefined };
    case 'switch-done':
      return { ...s, switching: undefined };
    case 'switch-failed':
      return { ...s, switching: undefined, notice: a.error };
    case 'dismiss':
      return { ...s, notice: undefined };
  }
}

/** alternativeAt returns the alternative drawn on a row, if the row has siblings. */
export function alternativeAt(meta: BranchMeta | undefined, entryId: string): Alternative | undefined {
  const a = meta?.alternatives.find((x) => x.entryId === entryId);
  return a && a.heads.length > 1 ? a : undefined;
}

/** neighbor is the head one step from the shown one (delta -1 or +1), if there is one. */
export function neighbor(a: Alternative, delta: number): string | undefined {
  return a.heads[a.index + delta];
}

/**
 * samePlace finds, in the metadata of the newly selected head, the
 * alternative at the place the reader moved from: the one listing the same
 * heads. Its entryId is the row to keep the reader at.
 */
export function samePlace(meta: BranchMeta, from: Alternative): Alternative | undefined {
  const key = from.heads.join('\n');
  return meta.alternatives.find((a) => a.heads.join('\n') === key) ?? meta.alternatives.find((a) => a.heads.some((h) => from.heads.includes(h)));
}

/** refusal is the reader-facing sentence for a refused edit or switch. */
export function refusal(code: string | undefined, reason: string | undefined, what: 'edit' | 'switch'): string {
  switch (code) {
    case 'busy':
      return what === 'edit'
        ? 'A reply is still running: stop it or wait for it to finish, then send the edit again. Your text is kept.'
        : 'A reply is still running: stop it or wait for it to finish before switching branches.';
    case 'unsupported':
      return 'This message was summarized by a compaction and cannot be edited.';
    case 'not-found':
      return what === 'edit' ? 'This message is no longer in the selected branch.' : 'That branch no longer exists.';
    case 'locked':
      return 'Another folio is writing this conversation; try again when it is done.';
    case 'bad-request':
      return 'The edited text is empty.';
    case 'disconnected':
      return 'Not connected: nothing was sent. Your text is kept; try again when the connection is back.';
    default:
      return `${what === 'edit' ? 'The edit' : 'The switch'} was refused${code ? ` (${code})` : ''}${reason ? `: ${reason}` : ''}.`;
  }
}

/** The transcript view's part in a switch: keep the reader at a message. */
export interface Focusable {
  focusOn(entryId: string): void;
}

export interface BranchControllerOptions {
  client: Client;
  conversation: string;
  /** Reads the conversation's metadata (GET /api/v2/conversations/{id}). */
  readMeta: () => Promise<BranchMeta>;
  /** The pane's transcript view, once it exists. */
  view: () => Focusable | undefined;
  newId: () => string;
}

/**
 * BranchController runs a pane's branch actions. It re-reads metadata when
 * the pane opens and on every `head` event (an edit, a switch, or another
 * tab's), since alternatives belong to the selected head.
 */
export class BranchController {
  private state: BranchState = emptyBranches;
  private listeners = new Set<() => void>();
  private unsub: () => void;
  private metaRead = 0;
  private disposed = false;

  constructor(private readonly o: BranchControllerOptions) {
    this.unsub = o.client.onEvent((f) => this.onEvent(f));
    void this.refresh();
  }

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  getState = (): BranchState => this.state;

  dispatch(a: BranchAction): void {
    const next = reduceBranches(this.state, a);
    if (next === this.state) return;
    this.state = next;
    for (const fn of this.listeners) fn();
  }

  /** refresh reads metadata; only the newest read is applied. */
  async refresh(): Promise<BranchMeta | undefined> {
    const n = ++this.metaRead;
    try {
      const m = await this.o.readMeta();
      if (this.disposed || n !== this.metaRead) return undefined;
      this.dispatch({ type: 'meta', meta: { head: m.head || 'main', branches: m.branches ?? [], alternatives: m.alternatives ?? [] } });
      return this.state.meta;
    } catch {
      return undefined; // no branch navigation until the next read
    }
  }

  private onEvent(f: ServerFrame) {
    if (f.type === 'event' && f.op === 'head' && f.conversation === this.o.conversation) void this.refresh();
  }

  private async command(frame: DistributiveOmit<Edit | SelectBranch, 'conversation' | 'commandId'>): Promise<{ state: string; code?: string; reason?: string; head?: string }> {
    try {
      const r = await this.o.client.request({ conversation: this.o.conversation, commandId: this.o.newId(), ...frame } as Edit | SelectBranch);
      return r.receipt as { state: string; code?: string; reason?: string; head?: string };
    } catch (e) {
      if (e instanceof ProtocolError) return { state: 'rejected', code: e.code, reason: e.detail };
      return { state: 'rejected', code: 'disconnected' };
    }
  }

  /**
   * sendEdit sends the draft of entryId as an `edit` (a new command ID each
   * attempt: a refused edit did nothing, so trying again is a new command).
   * Refused, the draft stays with the reason; delivered, it is dropped and the
   * view rebuilds on the new head from the `head`/`replaced` events.
   */
  async sendEdit(entryId: string): Promise<boolean> {
    const d = this.state.edits[entryId];
    if (!d || d.sending) return false;
    if (d.text.trim() === '') {
      this.dispatch({ type: 'edit-failed', entryId, error: refusal('bad-request', undefined, 'edit') });
      return false;
    }
    this.dispatch({ type: 'edit-sending', entryId });
    const r = await this.command({ type: 'edit', entryId, text: d.text });
    if (this.disposed) return false;
    if (r.state === 'rejected') {
      this.dispatch({ type: 'edit-failed', entryId, error: refusal(r.code, r.reason, 'edit') });
      return false;
    }
    this.dispatch({ type: 'edit-done', entryId });
    void this.refresh();
    return true;
  }

  /**
   * select moves to the sibling delta steps from the shown one at alt, then
   * keeps the reader at that place: the new head's row for the same
   * alternative, found in its metadata, by ID.
   */
  async select(alt: Alternative, delta: number): Promise<boolean> {
    const head = neighbor(alt, delta);
    if (!head || this.state.switching) return false;
    this.dispatch({ type: 'switch-start', head });
    const r = await this.command({ type: 'select-branch', head });
    if (this.disposed) return false;
    if (r.state === 'rejected') {
      this.dispatch({ type: 'switch-failed', error: refusal(r.code, r.reason, 'switch') });
      return false;
    }
    const m = await this.refresh();
    this.dispatch({ type: 'switch-done' });
    const at = m && m.head === head ? samePlace(m, alt) : undefined;
    if (at) this.o.view()?.focusOn(at.entryId);
    return true;
  }

  /** selectHead makes head the selected branch (the graph view's click); the view rebuilds from the `head` event. */
  async selectHead(head: string): Promise<boolean> {
    if (this.state.switching || head === this.state.meta?.head) return false;
    this.dispatch({ type: 'switch-start', head });
    const r = await this.command({ type: 'select-branch', head });
    if (this.disposed) return false;
    if (r.state === 'rejected') {
      this.dispatch({ type: 'switch-failed', error: refusal(r.code, r.reason, 'switch') });
      return false;
    }
    await this.refresh();
    this.dispatch({ type: 'switch-done' });
    return true;
  }

  dispose(): void {
    this.disposed = true;
    this.unsub();
    this.listeners.clear();
  }
}
