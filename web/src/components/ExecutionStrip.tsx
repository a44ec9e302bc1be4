import { ChevronRight } from 'lucide-react';
import { useState } from 'react';
import type { Step, ToolCall } from '../chat/types';
import { catalogs, useCatalog, type Catalog } from '../i18n/catalog';
import { ArtifactOutput } from './ArtifactOutput';
import { PresentationView } from './presenters';

// Which strips are open survives a row unmounting outside the viewport.
const openStrips = new Set<string>();

/** stripSummary counts a group's steps: "Thinking ×2 · Functions ×3 · Sub-agent: research". */
export function stripSummary(steps: readonly Step[], t: Catalog = catalogs.en): string {
  const thinking = steps.filter((s) => s.kind === 'thinking').length;
  const functions = steps.filter((s) => s.kind === 'function').length;
  const parts: string[] = [];
  if (thinking > 0) parts.push(thinking === 1 ? t.thinkingStep : t.thinkingSteps(thinking));
  if (functions > 0) parts.push(functions === 1 ? t.functionStep : t.functionSteps(functions));
  for (const s of steps) if (s.kind === 'agent') parts.push(t.subAgent(s.name));
  return parts.join(' · ');
}

/**
 * toolLabel names a call as the terminal's rows do: the tool, then what it
 * did ("shell · ls -la"), or the receipt's own words when they do not start
 * with the tool's name ("read README.md").
 */
export function toolLabel(call: ToolCall): string {
  let rest = stepSummary(call);
  const named = (call.summary ?? '').startsWith(`${call.name} `);
  // The shell's receipt reads "$ ls -la": the prompt sign stands for the tool.
  if (rest.startsWith('$ ')) return `${call.name} · ${rest.slice(2)}`;
  if (named && rest) return `${call.name} · ${rest}`;
  rest ||= call.name;
  return rest;
}

/** stripTools names a group's calls (sub-agents by their name), at most three, then "+n". */
export function stripTools(steps: readonly Step[]): string {
  const names = steps.flatMap((s) => (s.kind === 'function' ? [toolLabel(s.call)] : []));
  const shown = names.slice(0, 3).map((n) => (n.length > 60 ? `${n.slice(0, 59)}…` : n));
  return names.length > 3 ? `${shown.join(', ')} +${names.length - 3}` : shown.join(', ');
}

/** stepSummary is a call's summary without the tool name the receipt already starts with ("shell go test" → "go test"). */
export function stepSummary(call: ToolCall): string {
  const s = call.summary ?? '';
  return s.startsWith(`${call.name} `) ? s.slice(call.name.length + 1) : s === call.name ? '' : s;
}

/** thinkingLabel names a thinking step: its label, else the start of its first line. */
function thinkingLabel(step: Extract<Step, { kind: 'thinking' }>, t: Catalog): string {
  if (step.label && step.label !== 'Thinking') return step.label;
  const first = step.text.trim().split('\n')[0] ?? '';
  if (!first) return t.thinkingStep;
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}

function FunctionStep({ call, nested = false }: { call: ToolCall; nested?: boolean }) {
  const t = useCatalog();
  const [open, setOpen] = useState(false);
  const summary = stepSummary(call);
  const full = call.presentation?.artifact;
  return (
    <li className="step step-function" data-step-id={call.id} data-state={call.state} data-nested={nested || undefined}>
      <button type="button" className="step-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={`step-dot step-dot-${call.state}`} aria-hidden="true" />
        <span className="step-name">{call.name}</span>
        {summary ? <span className="step-summary">{summary}</span> : null}
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
              <span className="step-label">{t.arguments}</span>
              <pre>{call.args}</pre>
            </div>
          ) : null}
          {call.result ? (
            <div className="step-field">
              <span className="step-label">{t.result}</span>
              <pre>{call.result}</pre>
            </div>
          ) : null}
          {call.error ? (
            <div className="step-field step-error" role="note">
              <span className="step-label">{t.error}</span>
              <pre>{call.error}</pre>
            </div>
          ) : null}
          <div className="step-ids">
            <span>
              {t.entry} {call.id}
            </span>
            {call.invocationId ? (
              <span>
                {' '}
                · {t.invocation} {call.invocationId}
              </span>
            ) : null}
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
  const t = useCatalog();
  return (
    <li className="step step-thinking" data-step-id={step.id}>
      <details>
        <summary>{thinkingLabel(step, t)}</summary>
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
  const t = useCatalog();
  const [open, setOpen] = useState(openStrips.has(id));
  const toggle = () => {
    if (open) openStrips.delete(id);
    else openStrips.add(id);
    setOpen(!open);
  };
  const running = steps.some((s) => s.kind !== 'thinking' && s.call.state === 'running');
  const tools = stripTools(steps);
  return (
    <div className="execution-strip" data-strip-id={id} data-running={running || undefined}>
      {/* The counts are the button's name; the calls it holds are named beside them, as the terminal names its rows. */}
      <button type="button" className="strip-summary" aria-expanded={open} aria-label={stripSummary(steps, t)} aria-describedby={tools ? `${id}-tools` : undefined} onClick={toggle}>
        <ChevronRight aria-hidden="true" size={14} className="strip-chevron" />
        <span className="strip-counts">{stripSummary(steps, t)}</span>
        {tools ? (
          <span className="strip-tools" id={`${id}-tools`} data-testid="strip-tools">
            {tools}
          </span>
        ) : null}
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
                <span className="step-name">{t.subAgent(s.name)}</span>
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
