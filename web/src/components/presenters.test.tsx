import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
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
