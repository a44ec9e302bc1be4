// Reconciling what the client holds for one entry with a newer observation of
// it: a page of the same generation, a live upsert or settle, or a reconnect
// checkpoint. Pure functions; the window reducer (window.ts) calls them.
//
// The rules: message IDs and stored order define the transcript. A running
// observation never removes a received tool call, shortens agent or reasoning
// text, or reopens a settled entry. A terminal observation updates lifecycle
// and metadata but keeps received trace (a presentation) it omits. Only a
// window or branch replacement removes rows, and that is the reducer's job.

/** A transcript entry in its canonical JSON form. */
export interface Entry {
  id: string;
  content: { kind: string; [member: string]: unknown };
  timestamp?: string;
}

/** What the client holds for an entry. */
export interface Held {
  entry: Entry;
  /** The seq of the entry's last change this value reflects (page: the capture seq). */
  revision: number;
  /** true: still changing; false: settled, never changes again; undefined: not known (from a page). */
  open?: boolean;
}

/** The kind of change an observation is. */
export type Observation = 'page' | 'running' | 'settle';

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** textOf returns the growing text of agent and reasoning entries. */
function textOf(e: Entry): string | undefined {
  if (e.content.kind === 'agent') return str(e.content.markdown);
  if (e.content.kind === 'reasoning') return str(e.content.text);
  return undefined;
}

function withText(e: Entry, text: string): Entry {
  const member = e.content.kind === 'agent' ? 'markdown' : 'text';
  return { ...e, content: { ...e.content, [member]: text } };
}

/**
 * reconcile returns what to hold after observing next for an entry already
 * held as prev. It returns prev itself (same object) when the observation is
 * stale or would break a rule, so callers can test identity for "no change".
 */
export function reconcile(prev: Held | undefined, next: Held, how: Observation): Held {
  if (!prev) return next;
  if (next.revision <= prev.revision) return prev; // stale or a repeat
  if (prev.open === false) return prev; // settled: never changes again
  if (how === 'settle') {
    // Terminal: take the final value, but keep received trace it omits.
    let entry = next.entry;
    if (prev.entry.content.presentation !== undefined && entry.content.presentation === undefined) {
      entry = { ...entry, content: { ...entry.content, presentation: prev.entry.content.presentation } };
    }
    return { entry, revision: next.revision, open: false };
  }
  // Running (or a page of a later capture): text never gets shorter.
  let entry = next.entry;
  const before = textOf(prev.entry);
  const after = textOf(entry);
  if (before !== undefined && after !== undefined && after.length < before.length && before.startsWith(after)) {
    entry = withText(entry, before);
  }
  if (prev.entry.content.presentation !== undefined && entry.content.presentation === undefined) {
    entry = { ...entry, content: { ...entry.content, presentation: prev.entry.content.presentation } };
  }
  return { entry, revision: next.revision, open: how === 'page' ? prev.open : next.open };
}

/**
 * mergeGroup returns a group's entry IDs when a page (of the same generation)
 * brings fresh ones: the page's order, plus every ID the client received live
 * for this group that the page omits, kept after the entry it followed. A
 * running snapshot therefore never removes a received tool call.
 */
export function mergeGroup(pageIds: readonly string[], heldIds: readonly string[]): string[] {
  const out = [...pageIds];
  const present = new Set(out);
  for (let i = 0; i < heldIds.length; i++) {
    const id = heldIds[i]!;
    if (present.has(id)) continue;
    // Place it after its nearest predecessor that is present.
    let at = -1;
    for (let j = i - 1; j >= 0; j--) {
      const k = out.indexOf(heldIds[j]!);
      if (k >= 0) {
        at = k;
        break;
      }
    }
    out.splice(at + 1, 0, id);
    present.add(id);
  }
  return out;
}
