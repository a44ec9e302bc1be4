import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Message } from '../chat/types';
import { ApprovalView, waitingPresentation } from './ApprovalView';

const shellPreview = { schema: 'folio.shell', version: 1, revision: 0, payload: { command: 'rm -rf build', output: '' } };

const rows: Message[] = [
  { id: 'u1', role: 'user', text: 'clean up' },
  {
    id: 'a1',
    role: 'assistant',
    state: 'awaiting_approval',
    segments: [
      {
        kind: 'steps',
        id: 's1',
        steps: [{ kind: 'function', id: 'k1', call: { id: 'k1', name: 'shell', state: 'running', invocationId: 'k1', presentation: shellPreview } }],
      },
    ],
  },
];

describe('ApprovalView', () => {
  it('paints a built-in call through its presenter, as the transcript does, not as JSON', () => {
    const p = waitingPresentation(rows, 'k1');
    expect(p).toBe(shellPreview);
    const { container } = render(<ApprovalView args={'{"command":"rm -rf build"}'} presentation={p} />);
    expect(container.querySelector('.presentation[data-schema="folio.shell"] .presentation-terminal')!.textContent).toBe('$ rm -rf build\n');
    expect(container.textContent).not.toContain('{"');
    expect(container.textContent).not.toContain('command');
  });

  it('shows a call without a preview as a bounded field list, never raw JSON', () => {
    expect(waitingPresentation(rows, 'other')).toBeUndefined();
    const { container } = render(<ApprovalView args={'{"server":"db","query":"drop table t"}'} />);
    expect([...container.querySelectorAll('dt')].map((d) => d.textContent)).toEqual(['server', 'query']);
    expect(container.textContent).not.toContain('{"');
  });
});
