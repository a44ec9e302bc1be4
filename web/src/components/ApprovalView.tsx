// An approval request shown as its tool's presenter paints the call: the
// engine gives a waiting call of a built-in tool its tool's preview (the
// command a shell call runs, the diff a write or an edit makes) as the
// call's presentation, and the same adapter that shows the call in the
// transcript shows it here. A tool without a preview (an MCP or plugin
// tool, a sub-agent's call) shows its arguments as a bounded field list,
// never as raw JSON.
import type { Message, Presentation, ToolCall } from '../chat/types';
import { PresentationView } from './presenters';

type Args = Record<string, unknown>;

/** waitingPresentation finds the presentation of the call with this invocation (or entry) ID in the rows, newest first. */
export function waitingPresentation(rows: readonly Message[], id: string): Presentation | undefined {
  const find = (calls: readonly ToolCall[]): Presentation | undefined => {
    for (const c of calls) {
      if (c.id === id || c.invocationId === id) return c.presentation;
      const inner = c.children ? find(c.children) : undefined;
      if (inner) return inner;
    }
    return undefined;
  };
  for (let i = rows.length - 1; i >= 0; i--) {
    const m = rows[i];
    if (m?.role !== 'assistant') continue;
    for (const seg of m.segments) {
      if (seg.kind !== 'steps') continue;
      const p = find(seg.steps.flatMap((s) => (s.kind === 'thinking' ? [] : [s.call])));
      if (p) return p;
    }
  }
  return undefined;
}

/** ApprovalView shows one waiting call through its presenter, else its arguments as a bounded field list. */
export function ApprovalView({ args, presentation }: { args: string; presentation?: Presentation }) {
  if (presentation) {
    return (
      <div className="approval-body">
        <PresentationView presentation={presentation} />
      </div>
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  const a = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Args) : undefined;
  if (a) {
    return (
      <dl className="approval-body approval-fields">
        {Object.entries(a)
          .slice(0, 12)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{typeof v === 'string' ? v.slice(0, 500) : JSON.stringify(v)?.slice(0, 500)}</dd>
            </div>
          ))}
      </dl>
    );
  }
  return <pre className="approval-body">{args.slice(0, 500)}</pre>;
}
