import { ArrowDown } from 'lucide-react';
import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { Message } from '../chat/types';
import type { Anchor, TranscriptView } from '../chat/view';
import { atEnd } from '../chat/window';
import { typesetMath } from '../markdown/math';
import { useCatalog } from '../i18n/catalog';
import { useLatest } from '../useLatest';
import { MessageBubble } from './Bubbles';

// How close to the bottom, in pixels, still counts as reading the latest.
const PIN_SLACK = 24;
// Rows this far outside the viewport stay mounted.
const OVERSCAN = 600;
// Prefetch distance: a base, growing with scroll speed, up to a bound.
const PREFETCH_BASE = 800;
const PREFETCH_MAX = 4000;
const PREFETCH_PER_SPEED = 600; // px of distance per px/ms of speed

/** prefetchDistance is how near an edge, in pixels, reading ahead starts at a scroll speed (px/ms). */
export function prefetchDistance(speed: number): number {
  return Math.min(PREFETCH_MAX, PREFETCH_BASE + Math.abs(speed) * PREFETCH_PER_SPEED);
}

/** prefetchSide says which side to read ahead on: the direction of travel, or the near side at rest. */
export function prefetchSide(above: number, below: number, speed: number, dir: number): 'before' | 'after' | undefined {
  const d = prefetchDistance(speed);
  if (dir <= 0 && above < d) return 'before';
  if (dir >= 0 && below < d) return 'after';
  return undefined;
}

export interface TranscriptProps {
  view: TranscriptView;
  /** Measured row heights; evicted rows' heights are removed from it. */
  heights: Map<string, number>;
  /** Where to restore on mount, if anywhere. */
  saved?: Anchor;
  /** Called on unmount with the final reading anchor. */
  onSave: (a: Anchor | undefined) => void;
  visible?: boolean;
}

const Row = memo(function Row({ message }: { message: Message }) {
  return <MessageBubble message={message} />;
});

/**
 * Transcript is the scrolling message column over a bounded window. It keeps
 * the reader's place by message ID: after every commit that inserts or evicts
 * rows it puts the anchor message back at its offset before the browser paints.
 * While the reader follows the latest message it stays pinned to the bottom.
 * Rows far outside the viewport are unmounted and keep their measured height.
 */
export function Transcript({ view, heights, saved, onSave, visible = true }: TranscriptProps) {
  const t = useCatalog();
  const state = useSyncExternalStore(view.subscribe, view.getState);
  const w = state.window;
  const column = useRef<HTMLDivElement>(null);
  const rowEls = useRef(new Map<string, HTMLElement>());
  // A saved anchor not yet in the window waits; meanwhile the pane shows the latest.
  const savedPending = useRef(saved);
  const following = useRef(saved === undefined || !view.getState().rows.some((r) => r.id === saved.id));
  const anchor = useRef<Anchor | undefined>(saved);
  const mounted = useRef(true);
  const lastTop = useRef({ top: 0, t: 0 });
  const replacedAt = useRef(state.replacedAt);
  const pendingIntent = useRef<string | undefined>(undefined);
  // The last focus request applied (a branch switch keeps the reader at the edited message).
  const focusN = useRef(state.focus?.n ?? 0);
  // The rows to keep mounted, by ID (indices shift when pages come and go).
  const [mountedIds, setMountedIds] = useState<ReadonlySet<string> | undefined>(undefined);
  const rows = state.rows;

  useEffect(() => view.setVisible(visible), [view, visible]);

  // captureAnchor records the first row whose bottom is below the viewport top.
  const captureAnchor = useCallback(() => {
    const el = column.current;
    if (!el) return;
    const top = el.scrollTop;
    for (const r of view.getState().rows) {
      const row = rowEls.current.get(r.id);
      if (!row) continue;
      if (row.offsetTop + row.offsetHeight > top) {
        anchor.current = { id: r.id, offset: row.offsetTop - top };
        return;
      }
    }
  }, [view]);

  const prefetch = useCallback(
    (speed: number, dir: number) => {
      const el = column.current;
      if (!el) return;
      const side = prefetchSide(el.scrollTop, el.scrollHeight - el.scrollTop - el.clientHeight, speed, dir);
      if (side) view.want(side);
    },
    [view],
  );

  const updateRange = useCallback(() => {
    const el = column.current;
    if (!el) return;
    const lo = el.scrollTop - OVERSCAN;
    const hi = el.scrollTop + el.clientHeight + OVERSCAN;
    const list = view.getState().rows;
    let first = -1;
    let last = -1;
    for (let i = 0; i < list.length; i++) {
      const row = rowEls.current.get(list[i]!.id);
      if (!row) continue;
      const top = row.offsetTop;
      const bottom = top + row.offsetHeight;
      if (bottom >= lo && top <= hi) {
        if (first < 0) first = i;
        last = i;
      }
    }
    if (first < 0) return;
    const next = list.slice(Math.max(0, first - 1), last + 2).map((r) => r.id);
    setMountedIds((prev) => (prev && prev.size === next.length && next.every((id) => prev.has(id)) ? prev : new Set(next)));
  }, [view]);

  const onScroll = () => {
    const el = column.current;
    if (!el || !mounted.current) return;
    const now = performance.now();
    const dy = el.scrollTop - lastTop.current.top;
    const dt = Math.max(1, now - lastTop.current.t);
    lastTop.current = { top: el.scrollTop, t: now };
    const ws = view.getState().window;
    // A window being replaced has no rows to read: its collapse is not the reader's scrolling.
    if (!ws.loaded) return;
    // Only the bottom of the conversation's end is following; the bottom of an
    // intermediate window is not.
    following.current = atEnd(ws) && el.scrollHeight - el.scrollTop - el.clientHeight <= PIN_SLACK;
    captureAnchor();
    updateRange();
    prefetch(dy / dt, Math.sign(dy));
  };

  // Reader input cancels a pending jump or restore before it moves the view.
  const onInput = () => {
    savedPending.current = undefined;
    if (view.getState().intent) {
      view.cancelIntent();
      pendingIntent.current = undefined;
    }
  };

  // After every commit: measure, forget evicted heights, then restore the
  // reading position (pinned bottom, or the anchor message at its offset).
  useLayoutEffect(() => {
    const el = column.current;
    if (!el) return;
    const ids = new Set(rows.map((r) => r.id));
    for (const [id, row] of rowEls.current) {
      if (!ids.has(id)) rowEls.current.delete(id);
      else if (row.dataset.mounted === 'true') heights.set(id, row.offsetHeight);
    }
    for (const id of heights.keys()) if (!ids.has(id)) heights.delete(id);

    if (state.replacedAt !== replacedAt.current) {
      // The window was replaced: a jump lands on the latest; a restore on its anchor.
      replacedAt.current = state.replacedAt;
      if (pendingIntent.current === 'jump') following.current = true;
      pendingIntent.current = undefined;
    }
    const focus = state.focus;
    if (focus && focus.n !== focusN.current && rowEls.current.has(focus.id)) {
      // Put the message at the top, by ID; a saved position waiting from the
      // mount no longer applies.
      focusN.current = focus.n;
      savedPending.current = undefined;
      following.current = false;
      anchor.current = { id: focus.id, offset: 0 };
    }
    const wanted = savedPending.current;
    if (wanted && rowEls.current.has(wanted.id)) {
      savedPending.current = undefined;
      following.current = false;
      anchor.current = wanted;
    }
    if (following.current && atEnd(w)) {
      typesetMath(el);
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const row = rowEls.current.get(anchor.current.id);
      if (row) {
        const want = row.offsetTop - anchor.current.offset;
        if (Math.abs(el.scrollTop - want) >= 1) el.scrollTop = want;
      }
    }
    lastTop.current.top = el.scrollTop;
    updateRange();
  });

  // Restore a saved anchor that is not in the window: only on the first
  // window of this mount, so the effect runs on the token, reading the rest.
  const restoreInputs = useLatest({ saved, rows, intent: state.intent, view });
  const hasRows = rows.length > 0;
  useEffect(() => {
    const { saved, rows, intent, view } = restoreInputs.current;
    if (saved && savedPending.current && w.token && !rows.some((r) => r.id === saved.id) && hasRows && !intent && pendingIntent.current === undefined) {
      pendingIntent.current = 'restore';
      void view.restore(saved);
    }
  }, [w.token, hasRows, restoreInputs]);

  // Keep reading: a window that does not fill the viewport asks for more.
  useEffect(() => {
    if (!state.loading && !state.intent) prefetch(0, 0);
  }, [rows, state.loading, state.intent, state.failed, prefetch]);

  // On unmount, save the final anchor; queued frames and scroll events after
  // this must not overwrite it (mounted guards them).
  const unmountInputs = useLatest({ captureAnchor, onSave });
  useLayoutEffect(() => {
    mounted.current = true;
    // The cleanup wants the last render's functions, which this ref holds.
    const latest = unmountInputs;
    return () => {
      const { captureAnchor, onSave } = latest.current;
      if (!following.current) captureAnchor();
      mounted.current = false;
      onSave(savedPending.current ?? (following.current ? undefined : anchor.current));
    };
  }, [unmountInputs, following, anchor, savedPending]);

  const jump = () => {
    pendingIntent.current = 'jump';
    void view.jumpToLatest();
  };

  const showJump = !atEnd(w) || state.jumpFailed || state.intent === 'jump';
  return (
    <div className="transcript">
      <div
        className="message-column"
        ref={column}
        onScroll={onScroll}
        onWheel={onInput}
        onPointerDown={onInput}
        onKeyDown={onInput}
        onTouchStart={onInput}
        tabIndex={0}
        data-testid="message-column"
        data-at-end={atEnd(w)}
        data-loading={state.loading}
      >
        <div className="message-list">
          {w.hasMoreBefore ? <div className="history-edge">{t.earlierMessages}</div> : null}
          {rows.map((m) => {
            const h = heights.get(m.id);
            const mountIt = h === undefined || mountedIds === undefined || mountedIds.has(m.id);
            return (
              <div
                key={m.id}
                className="row"
                data-row-id={m.id}
                data-mounted={mountIt}
                style={mountIt ? undefined : { height: h }}
                ref={(el) => {
                  if (el) rowEls.current.set(m.id, el);
                }}
              >
                {mountIt ? <Row message={m} /> : null}
              </div>
            );
          })}
          {w.hasMoreAfter ? <div className="history-edge">{t.laterMessages}</div> : null}
        </div>
      </div>
      {showJump ? (
        <button
          type="button"
          className="jump-latest"
          data-state={state.intent === 'jump' ? 'pending' : state.jumpFailed ? 'failed' : 'idle'}
          onClick={jump}
        >
          <ArrowDown aria-hidden="true" size={14} />
          {state.jumpFailed ? t.jumpToLatestRetry : t.jumpToLatest}
        </button>
      ) : null}
    </div>
  );
}
