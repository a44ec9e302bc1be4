// Live tool presentations: an adapter per schema and version turns a bounded
// payload into a view. A schema (or version) this build does not know gets a
// bounded metadata line instead: never the raw payload.
import type { ReactNode } from 'react';
import type { Presentation } from '../chat/types';
import { useCatalog, type Catalog } from '../i18n/catalog';
import { mcpProgress } from './mcp';

/** An adapter renders a payload; t is the catalog for any words it shows. */
type Adapter = (payload: Record<string, unknown>, t: Catalog) => ReactNode;

const registry = new Map<string, Adapter>();

/** registerPresenter adds the adapter for schema at version. */
export function registerPresenter(schema: string, version: number, adapter: Adapter): void {
  registry.set(`${schema}@${version}`, adapter);
}

const str = (v: unknown, max = 4000): string => (typeof v === 'string' ? v.slice(0, max) : '');

// The built-in tools' schemas (tools/tools.go; the terminal's adapters in
// tui/adapters.go read the same payloads).
registerPresenter('folio.shell', 1, (p, t) => (
  <>
    <pre className="presentation-terminal">
      {str(p.command, 300) ? `$ ${str(p.command, 300)}\n` : ''}
      {str(p.output)}
    </pre>
    {typeof p.exitCode === 'number' ? <span className="presentation-exit">{t.exitCode(p.exitCode)}</span> : null}
  </>
));
registerPresenter('folio.diff', 1, (p) => (
  <div className="presentation-diff">
    <div className="presentation-path">{str(p.path, 300)}</div>
    <pre>
      {str(p.diff)
        .split('\n')
        .map((line, i) => (
          <span key={i} className={line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : undefined}>
            {line}
            {'\n'}
          </span>
        ))}
    </pre>
  </div>
));
// A sub-agent: its label and status, then its newest steps (tool calls,
// thinking, text) as a nested list; the payload is bounded by the tool
// (tools/task.go), and this view bounds it again.
const TASK_STEPS = 64;
const STEP_MARK: Record<string, string> = { running: '◌', ok: '✓', failed: '✗', denied: '⊘' };
registerPresenter('folio.task', 1, (p, t) => {
  const steps = (Array.isArray(p.steps) ? p.steps : []).slice(-TASK_STEPS).filter(
    (s): s is Record<string, unknown> => typeof s === 'object' && s !== null && !Array.isArray(s),
  );
  const omitted = typeof p.omitted === 'number' && p.omitted > 0 ? Math.floor(p.omitted) : 0;
  return (
    <div className="presentation-task">
      <span className="presentation-task-head">
        {t.subAgent(str(p.label, 200))} · {str(p.status, 40)}
      </span>
      {steps.length > 0 || omitted > 0 ? (
        <ul className="presentation-task-steps">
          {omitted > 0 ? <li className="task-step-omitted">{t.earlierSteps(omitted)}</li> : null}
          {steps.map((s, i) => {
            const status = str(s.status, 20);
            return (
              <li key={i} className="task-step" data-kind={str(s.kind, 20)} data-status={status}>
                <span className="task-step-status" title={status}>
                  {STEP_MARK[status] ?? '·'}
                </span>{' '}
                <span className="task-step-name">{str(s.name, 120) || str(s.kind, 20)}</span>{' '}
                <span className="task-step-summary">{str(s.summary, 200)}</span>
                {typeof s.durationMs === 'number' && status !== 'running' ? (
                  <span className="task-step-duration"> {Math.round(s.durationMs)} ms</span>
                ) : null}
              </li>
            );
          })}
        </ul>
      ) : null}
      {str(p.answer, 1024) ? <p className="presentation-task-answer">{str(p.answer, 1024)}</p> : null}
    </div>
  );
});

// An MCP tool call's progress, then its result's content (mcp.tsx).
registerPresenter('folio.mcp.progress', 1, mcpProgress);

/** Presentation shows a tool's current presentation through its adapter. */
export function PresentationView({ presentation }: { presentation: Presentation }) {
  const t = useCatalog();
  const adapter = registry.get(`${presentation.schema}@${presentation.version}`);
  const payload = typeof presentation.payload === 'object' && presentation.payload !== null ? (presentation.payload as Record<string, unknown>) : {};
  if (adapter) return <div className="presentation" data-schema={presentation.schema}>{adapter(payload, t)}</div>;
  const a = presentation.artifact;
  return (
    <div className="presentation presentation-fallback" data-schema={presentation.schema}>
      {str(presentation.schema, 120)} v{presentation.version} · revision {presentation.revision}
      {a ? ` · ${a.committedBytes} bytes of ${str(a.contentType, 80)}` : ''}
    </div>
  );
}
