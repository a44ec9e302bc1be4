// Reconciling what the client holds for one entry with a newer observation of
// it: a page of the same generation, a live upsert or settle, or a reconnect
// checkpoint. Pure functions; the window reducer (window.ts) calls them.
//
// The rules: message IDs and stored order define the transcript. The server
// has one producer per conversation, so a newer revision of an entry is its
// whole current value: it replaces what the client held, and nothing the
// newer value lacks is kept (a closed call's argument draft disappears at
// its settle, as it does in the log). An older or repeated revision changes
// nothing, and a settled entry never reopens. A running page never removes a
// received tool call; only a window or branch replacement removes rows, and
// that is the reducer's job.

import type { Entry as LogEntry, Presentation } from '../protocol/entries';

/** A transcript entry in its canonical JSON form. */
/**
 * Entry is a transcript entry as the log schema types it (src/protocol/entries.ts,
 * generated from docs/schema/log-v3.schema.json); the timestamp may be absent
 * from a live entry the server has not stamped yet.
 */
export type Entry = Omit<LogEntry, 'timestamp'> & { timestamp?: string };

/**
 * toEntry takes an entry as it arrives in a frame (the server checked it
 * against the schema) after checking the members every consumer relies on:
 * an ID and a content with a kind. A content kind from a newer server passes
 * and is shown as nothing (rows.ts's default).
 */
export function toEntry(v: unknown): Entry | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as { id?: unknown; content?: unknown };
  if (typeof e.id !== 'string' || typeof e.content !== 'object' || e.content === null) return undefined;
  if (typeof (e.content as { kind?: unknown }).kind !== 'string') return undefined;
  return v as Entry;
}

/** What the client holds for an entry. */
export interface Held {
  entry: Entry;
  /** The seq of the entry's last change this value reflects (page: the capture seq). */
  revision: number;
  /** true: still changing; false: settled, never changes again; undefined: not known (from a page). */
  open?: boolean;
  /**
   * The live (ephemeral) presentation of an open tool call, from a
   * presentation event: shown over the entry's own while the call is open,
   * gone at its settle.
   */
  live?: unknown;
}

/** The kind of change an observation is. */
export type Observation = 'page' | 'running' | 'settle';

/**
 * reconcile returns what to hold after observing next for an entry already
 * held as prev. It returns prev itself (same object) when the observation is
 * stale or would break a rule, so callers can test identity for "no change".
 */
export function reconcile(prev: Held | undefined, next: Held, how: Observation): Held {
  if (!prev) return next;
  if (next.revision <= prev.revision) return prev; // stale or a repeat
  if (prev.open === false) return prev; // settled: never changes again
  if (how === 'settle') return { entry: next.entry, revision: next.revision, open: false };
  const open = how === 'page' ? prev.open : next.open;
  const live = next.live !== undefined ? next.live : prev.live;
  let entry = next.entry;
  if (live !== undefined && open !== false) {
    // A live presentation belongs to a tool call (the only content that has one).
    if (entry.content.kind === 'tool') entry = { ...entry, content: { ...entry.content, presentation: live as Presentation } };
    return { entry, revision: next.revision, open, live };
  }
  return { entry, revision: next.revision, open };
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

/**
 * appendText returns entry with text appended to its streaming text (an
 * agent's markdown, a reasoning's text) when that text is exactly offset
 * UTF-16 units long, and undefined otherwise: the tab missed something.
 */
export function appendText(entry: Entry, offset: number, text: string): Entry | undefined {
  const c = entry.content;
  if (c.kind === 'agent') {
    if (typeof c.markdown !== 'string' || c.markdown.length !== offset) return undefined;
    return { ...entry, content: { ...c, markdown: c.markdown + text } };
  }
  if (c.kind === 'reasoning') {
    if (typeof c.text !== 'string' || c.text.length !== offset) return undefined;
    return { ...entry, content: { ...c, text: c.text + text } };
  }
  return undefined;
}
