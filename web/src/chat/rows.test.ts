import { describe, expect, it } from 'vitest';
import type { Entry } from './reconcile';
import { replyMessage, withoutEmptyItem } from './rows';
import type { AssistantMessage } from './types';

const held = (entries: Entry[]) => entries.map((entry) => ({ entry, revision: 1, open: false }));
const failure = (id: string): Entry => ({ id, content: { kind: 'failure', reason: 'rate-limit', retryable: true, retryAfterMs: 2000 } });
const agent = (id: string, markdown: string): Entry => ({ id, content: { kind: 'agent', markdown } });

describe('replyMessage', () => {
  it('keeps a retried failure in the reply and lets the new attempt decide the state', () => {
    const m = replyMessage('a1', held([agent('a1', 'partial'), failure('f1'), agent('a2', 'recovered')]), false) as AssistantMessage;
    expect(m.state).toBe('completed');
    expect(m.failure).toBeUndefined();
    expect(m.segments.map((s) => s.kind)).toEqual(['text', 'failure', 'text']);
  });
  it('a failure that is last is the reply failure, with what retry needs', () => {
    const m = replyMessage('a1', held([agent('a1', 'partial'), failure('f1')]), false);
    expect(m.state).toBe('failed');
    expect(m.failure).toMatchObject({ id: 'f1', reason: 'rate_limit', retryable: true, retryAfterMs: 2000 });
  });
  it('reads the stopped time and the turn receipt', () => {
    const m = replyMessage(
      'a1',
      held([
        agent('a1', 'half'),
        { id: 's', content: { kind: 'stopped', summary: { elapsedMs: 2740, done: [], notDone: [] } } },
        { id: 'r', content: { kind: 'turn-receipt', steps: [{ durationMs: 2740 }], finishedAt: 1 } },
      ]),
      false,
    );
    expect(m.state).toBe('cancelled');
    expect(m.stoppedAfterMs).toBe(2740);
    expect(m.receipt).toEqual({ steps: [{ durationMs: 2740 }], finishedAt: 1 });
  });
  it('shows every turn receipt of a reply, in stored order, as the terminal prints each', () => {
    const receipt = (id: string, ms: number): Entry => ({ id, content: { kind: 'turn-receipt', steps: [{ durationMs: ms }], finishedAt: ms } });
    const m = replyMessage('a1', held([agent('a1', 'one'), receipt('r1', 1000), agent('a2', 'two'), receipt('r2', 2000)]), false);
    expect(m.receipts?.map((r) => r.steps[0]!.durationMs)).toEqual([1000, 2000]);
    expect(m.receipt?.finishedAt).toBe(2000);
  });
  it('a stopped answer never ends with an empty bullet point', () => {
    const m = replyMessage('a1', held([agent('a1', 'Steps:\n\n- one\n- '), { id: 's', content: { kind: 'stopped', summary: { elapsedMs: 10 } } }]), false);
    expect(m.segments).toEqual([{ kind: 'text', id: 'a1', markdown: 'Steps:\n\n- one' }]);
    expect(withoutEmptyItem('1. a\n2.')).toBe('1. a');
    expect(withoutEmptyItem('* ')).toBe('');
    expect(withoutEmptyItem('- one\n- two')).toBe('- one\n- two');
    expect(withoutEmptyItem('costs $5 -')).toBe('costs $5 -');
    expect(withoutEmptyItem('a\n\n---')).toBe('a\n\n---');
  });
});
