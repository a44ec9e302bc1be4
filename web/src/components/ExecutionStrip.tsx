import { useState } from 'react';
import type { Step, ToolCall } from '../chat/types';
import { ArtifactOutput } from './ArtifactOutput';
import { PresentationView } from './presenters';

// Which strips are open survives a row unmounting outside the viewport.
const openStrips = new Set<string>();

/** stripSummary counts a group's steps: "Thinking ×2 · Functions ×3 · Sub-agent: research". */
export function stripSummary(steps: readonly Step[]): string {
  const thinking = steps.filter((s) => s.kind === 'thinking').length;
  const functions = steps.filter((s) => s.kind === 'function').length;
  const parts: string[] = [];
  if (thinking > 0) parts.push(thinking === 1 ? 'Thinking' : `Thinking ×${thinking}`);
  if (functions > 0) parts.push(functions === 1 ? 'Function' : `Functions ×${functions}`);
  for (const s of steps) if (s.kind === 'agent') parts.push(`Sub-agent: ${s.name}`);
  return parts.join(' · ');
}

function FunctionStep({ call, nested = false }: { call: ToolCall; nested?: boolean }) {
  const [open, setOpen] = useState(false);
  const full = call.presentation?.artifact;
  return (
    <li className="step step-function" data-step-id={call.id} data-state={call.state} data-nested={nested || undefined}>
      <button type="button" className="step-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={`step-dot step-dot-${call.state}`} aria-hidden="true" />
        <span className="step-name">{call.name}</span>
        {call.summary ? <span className="step-summary">{call.summary}</span> : null}
      </button>
      {call.presentation ? <PresentationView presentation={call.presentation} /> : null}
      {call.supplementals?.map((s) => (
        <div key={s.key} className="step-supplemental" data-key={s.key}>
          <PresentationView presentation={s.presentation} />
        </div>
      ))}
      {open ? (
        <div className="step-detail">
          {call.args ? (
            <div className="step-field">
              <span className="step-label">Arguments</span>
              <pre>{call.args}</pre>
            </div>
          ) : null}
          {call.result ? (
            <div className="step-field">
              <span className="step-label">Result</span>
              <pre>{call.result}</pre>
            </div>
          ) : null}
          {call.error ? (
            <div className="step-field step-error" role="note">
              <span className="step-label">Error</span>
              <pre>{call.error}</pre>
            </div>
          ) : null}
          <div className="step-ids">
            <span>entry {call.id}</span>
            {call.invocationId ? <span> · invocation {call.invocationId}</span> : null}
            {call.durationMs !== undefined ? <span> · {Math.round(call.durationMs)} ms</span> : null}
          </div>
          {full ? <ArtifactOutput artifact={full} /> : null}
          {call.children?.length ? (
            <ul className="steps nested">
              {call.children.map((c) => (
                <FunctionStep key={c.id} call={c} nested />
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

function ThinkingStep({ step }: { step: Extract<Step, { kind: 'thinking' }> }) {
  return (
    <li className="step step-thinking" data-step-id={step.id}>
      <details>
        <summary>{step.label}</summary>
        <p className="thinking-text">{step.text}</p>
      </details>
    </li>
  );
}

/**
 * ExecutionStrip summarizes one execution group of a reply and expands to its
 * steps. Streaming, finished and restored replies all use it; a reply's
 * completion never swaps it for another layout.
 */
export function ExecutionStrip({ id, steps }: { id: string; steps: readonly Step[] }) {
  const [open, setOpen] = useState(openStrips.has(id));
  const toggle = () => {
    if (open) openStrips.delete(id);
    else openStrips.add(id);
    setOpen(!open);
  };
  const running = steps.some((s) => s.kind !== 'thinking' && s.call.state === 'running');
  return (
    <div className="execution-strip" data-strip-id={id} data-running={running || undefined}>
      <button type="button" className="strip-summary" aria-expanded={open} onClick={toggle}>
        {stripSummary(steps)}
      </button>
      {open ? (
        <ul className="steps">
          {steps.map((s) =>
            s.kind === 'thinking' ? (
              <ThinkingStep key={s.id} step={s} />
            ) : s.kind === 'function' ? (
              <FunctionStep key={s.id} call={s.call} />
            ) : (
              <li key={s.id} className="step step-agent" data-step-id={s.id}>
                <span className="step-name">Sub-agent: {s.name}</span>
                <ul className="steps nested">
                  <FunctionStep call={s.call} nested />
                </ul>
              </li>
            ),
          )}
        </ul>
      ) : null}
    </div>
  );
}
