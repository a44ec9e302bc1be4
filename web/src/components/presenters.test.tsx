import { fireEvent, render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Held } from '../chat/reconcile';
import { replyMessage } from '../chat/rows';
import { asEntry } from '../../test/messages';
import { ExecutionStrip, stripSummary, stripTools, toolLabel } from './ExecutionStrip';
import { PresentationView } from './presenters';

describe('PresentationView', () => {
  it('shows the built-in shell payload: command, output and exit code', () => {
    const { container } = render(
      <PresentationView presentation={{ schema: 'folio.shell', version: 1, revision: 3, payload: { command: 'ls -la', output: 'a.txt\nb.txt', exitCode: 0 } }} />,
    );
    expect(container.querySelector('.presentation-terminal')!.textContent).toBe('$ ls -la\na.txt\nb.txt');
    expect(container.textContent).toContain('exit 0');
  });

  it('marks added and removed diff lines', () => {
    const { container } = render(
      <PresentationView presentation={{ schema: 'folio.diff', version: 1, revision: 1, payload: { path: 'notes.txt', diff: '@@ -1 +1 @@\n-old\n+new' } }} />,
    );
    expect(container.querySelector('.diff-add')!.textContent).toBe('+new\n');
    expect(container.querySelector('.diff-del')!.textContent).toBe('-old\n');
    expect(container.textContent).toContain('notes.txt');
  });

  it('never shows the raw payload of a schema it has no adapter for', () => {
    const { container } = render(
      <PresentationView presentation={{ schema: 'acme.secret', version: 2, revision: 5, payload: { token: 'CANARY-123' } }} />,
    );
    expect(container.textContent).not.toContain('CANARY-123');
    expect(container.textContent).toContain('acme.secret v2 · revision 5');
  });

  it('treats an unknown version of a known schema as unknown', () => {
    const { container } = render(
      <PresentationView presentation={{ schema: 'folio.shell', version: 9, revision: 1, payload: { command: 'rm', output: 'SHOULD-NOT-SHOW' } }} />,
    );
    expect(container.textContent).not.toContain('SHOULD-NOT-SHOW');
  });
});

describe('folio.task', () => {
  const taskEntry = (open: boolean, payload: Record<string, unknown>): Held => ({
    entry: {
      id: 't1',
      content: {
        kind: 'tool',
        receipt: open ? { app: 'task', summary: 'task', status: 'failed', reason: 'running', notDone: 'the call did not complete' } : { app: 'task', summary: 'task scout', status: 'ok', durationMs: 5000 },
        invocationId: 't1',
        presentation: { schema: 'folio.task', version: 1, revision: 3, payload },
      },
    },
    revision: 1,
    open,
  });
  const settled = {
    label: 'scout',
    child: 'c9',
    status: 'done',
    steps: [
      { kind: 'reasoning', summary: 'where to start', status: 'ok' },
      { kind: 'tool', name: 'probe', summary: 'probe 1', status: 'ok', durationMs: 12 },
      { kind: 'tool', name: 'slow', summary: 'slow', status: 'failed' },
      { kind: 'answer', summary: 'Found it.', status: 'ok' },
    ],
    omitted: 2,
    answer: 'Found it.',
  };

  it('lists the nested calls in order with status, name and summary', () => {
    const { container } = render(<PresentationView presentation={{ schema: 'folio.task', version: 1, revision: 3, payload: settled }} />);
    const items = [...container.querySelectorAll('.task-step')];
    expect(items.map((li) => `${li.getAttribute('data-status')} ${li.querySelector('.task-step-name')!.textContent} ${li.querySelector('.task-step-summary')!.textContent}`)).toEqual([
      'ok reasoning where to start',
      'ok probe probe 1',
      'failed slow slow',
      'ok answer Found it.',
    ]);
    expect(container.querySelector('.task-step-omitted')!.textContent).toBe('… 2 earlier steps');
    expect(container.querySelector('.presentation-task-head')!.textContent).toBe('Sub-agent: scout · done');
  });

  it('ignores malformed steps and bounds the list', () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ kind: 'tool', name: `t${i}`, summary: '', status: 'ok' }));
    const { container } = render(
      <PresentationView presentation={{ schema: 'folio.task', version: 1, revision: 1, payload: { label: 'x', status: 'running', steps: [null, 'junk', ...many] } }} />,
    );
    const names = [...container.querySelectorAll('.task-step-name')].map((n) => n.textContent);
    expect(names).toHaveLength(64);
    expect(names[63]).toBe('t99');
  });

  it('names the sub-agent step by its label, and shows the same nested calls live and restored', () => {
    const live = replyMessage('r', [taskEntry(true, { ...settled, status: 'running', steps: settled.steps.slice(0, 2) })], true);
    const done = replyMessage('r', [taskEntry(false, settled)], false);
    for (const m of [live, done]) {
      const seg = m.segments[0]!;
      if (seg.kind !== 'steps') throw new Error(`segment ${seg.kind}`);
      expect(seg.steps[0]!.kind).toBe('agent');
      expect(stripSummary(seg.steps)).toBe('Sub-agent: scout');
    }
    const seg = done.segments[0]!;
    if (seg.kind !== 'steps') throw new Error('no steps');
    const { container } = render(<ExecutionStrip id="s-task" steps={seg.steps} />);
    fireEvent.click(container.querySelector('.strip-summary')!);
    const agentStep = container.querySelector('.step-agent')!;
    expect(agentStep.querySelector('.step-name')!.textContent).toBe('Sub-agent: scout');
    expect([...agentStep.querySelectorAll('.task-step-name')].map((n) => n.textContent)).toEqual(['reasoning', 'probe', 'slow', 'answer']);
  });
});

describe('supplemental items', () => {
  const work = (open: boolean, supplementals: unknown[]): Held => ({
    entry: asEntry({
      id: 'w1',
      content: {
        kind: 'tool',
        receipt: open ? { app: 'work', summary: 'work', status: 'failed', reason: 'running', notDone: 'the call did not complete' } : { app: 'work', summary: 'work', status: 'ok', durationMs: 5 },
        invocationId: 'w1',
        presentation: { schema: 'folio.shell', version: 1, revision: 2, payload: { command: 'make', output: 'primary out' } },
        supplementals,
      },
    }),
    revision: 1,
    open,
  });
  const stats = { key: 'stats', presentation: { schema: 'folio.diff', version: 1, revision: 1, payload: { path: 'stats.txt', diff: '+12 files' } } };
  const spinner = { key: 'spinner', presentation: { schema: 'folio.shell', version: 1, revision: 4, payload: { command: 'spin', output: 'ephemeral now' } } };

  let strips = 0;
  const shown = (h: Held): string[] => {
    const m = replyMessage('r', [h], h.open === true);
    const seg = m.segments[0]!;
    if (seg.kind !== 'steps') throw new Error(`segment ${seg.kind}`);
    const { container, unmount } = render(<ExecutionStrip id={`s-sup-${++strips}`} steps={seg.steps} />);
    fireEvent.click(container.querySelector('.strip-summary')!);
    const keys = [...container.querySelectorAll('.step-supplemental')].map((el) => `${el.getAttribute('data-key')}: ${el.textContent!.trim().replace(/\n/g, ' | ')}`);
    unmount();
    return keys;
  };

  it('shows every supplemental under the primary while the call runs, and what closure retained after', () => {
    expect(shown(work(true, [stats, spinner]))).toEqual(['stats: stats.txt+12 files', 'spinner: $ spin | ephemeral now']);
    expect(shown(work(false, [stats]))).toEqual(['stats: stats.txt+12 files']);
  });

  it('ignores malformed supplementals', () => {
    expect(shown(work(true, [null, 'junk', { key: 3 }, stats]))).toEqual(['stats: stats.txt+12 files']);
  });
});

describe('naming the calls of a strip', () => {
  const call = (name: string, summary: string) => ({ kind: 'function' as const, id: `${name}-${summary}`, call: { id: 'x', name, summary, state: 'done' as const } });
  it('names tools as the terminal does, after the counts', () => {
    expect(toolLabel(call('shell', '$ ls -la').call)).toBe('shell · ls -la');
    expect(toolLabel(call('shell', 'shell $ ls -la').call)).toBe('shell · ls -la');
    expect(toolLabel(call('read_file', 'read README.md').call)).toBe('read README.md');
    expect(toolLabel(call('probe', 'probe check disks').call)).toBe('probe · check disks');
    expect(toolLabel(call('probe', '').call)).toBe('probe');
    const steps = [call('shell', '$ ls -la'), call('read_file', 'read README.md')];
    expect(stripTools(steps)).toBe('shell · ls -la, read README.md');
    expect(stripTools([...steps, call('a', 'a 1'), call('b', 'b 2')])).toBe('shell · ls -la, read README.md, a · 1 +1');
    const { getByRole, getByTestId } = render(<ExecutionStrip id="s-named" steps={steps} />);
    // The button keeps its counts as its name; the calls are named beside them.
    expect(getByRole('button', { name: 'Functions ×2' })).toBeTruthy();
    expect(getByTestId('strip-tools').textContent).toBe('shell · ls -la, read README.md');
  });
});
