// An approval request shown by the tool's presenter: what the call would do,
// in the tool's own terms (the command a shell call runs, the file a write
// changes), never the raw JSON of its arguments.
import type { ReactNode } from 'react';

type Args = Record<string, unknown>;

const str = (v: unknown, max = 4000): string => (typeof v === 'string' ? v.slice(0, max) : '');

const presenters: Record<string, (a: Args) => ReactNode> = {
  shell: (a) => <pre className="approval-command">$ {str(a.command)}</pre>,
  write_file: (a) => (
    <>
      <div className="presentation-path">{str(a.path, 300)}</div>
      <pre className="approval-content">{str(a.content, 2000)}</pre>
    </>
  ),
  edit_file: (a) => (
    <>
      <div className="presentation-path">{str(a.path, 300)}</div>
      <pre className="approval-content presentation-diff">
        {str(a.old, 1000)
          .split('\n')
          .map((l, i) => (
            <span key={`o${i}`} className="diff-del">
              - {l}
              {'\n'}
            </span>
          ))}
        {str(a.new, 1000)
          .split('\n')
          .map((l, i) => (
            <span key={`n${i}`} className="diff-add">
              + {l}
              {'\n'}
            </span>
          ))}
      </pre>
    </>
  ),
};

/** ApprovalView shows one waiting call's arguments through its tool's presenter, else as a bounded field list. */
export function ApprovalView({ tool, args }: { tool: string; args: string }) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    parsed = undefined;
  }
  const a = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Args) : undefined;
  const present = Object.hasOwn(presenters, tool) ? presenters[tool] : undefined;
  if (a && present) return <div className="approval-body">{present(a)}</div>;
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
