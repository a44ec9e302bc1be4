import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ARTIFACT_CHUNK, ArtifactOutput, ArtifactReaderContext, type ArtifactReader } from './ArtifactOutput';

const tick = () => new Promise((r) => setTimeout(r, 0));

// 150,000-odd bytes of text whose two-byte "é" straddles the first range's end.
const text = 'a'.repeat(ARTIFACT_CHUNK - 1) + 'é' + '<b>x</b>'.repeat(10_000);
const data = new TextEncoder().encode(text);

function reader(log: [number, number][], fail = { next: false }): ArtifactReader {
  return async (_ref, offset, length) => {
    log.push([offset, length]);
    if (fail.next) {
      fail.next = false;
      throw new Error('offline');
    }
    const bytes = data.slice(offset, offset + Math.min(length, ARTIFACT_CHUNK));
    return { bytes, offset, total: data.length, final: true };
  };
}

const artifact = { ref: 'ab'.repeat(16), contentType: 'text/plain', committedBytes: data.length, available: true };

describe('ArtifactOutput', () => {
  it('reads bounded ranges on demand, decoding across range ends', async () => {
    const log: [number, number][] = [];
    const { container } = render(
      <ArtifactReaderContext.Provider value={reader(log)}>
        <ArtifactOutput artifact={artifact} />
      </ArtifactReaderContext.Provider>,
    );
    expect(log).toEqual([]); // nothing is read until the expander opens
    const toggle = screen.getByRole('button', { name: /Full output/ });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(toggle);
    await act(tick);
    expect(log).toEqual([[0, ARTIFACT_CHUNK]]);
    const pre = () => container.querySelector('.artifact-text')!.textContent!;
    expect(pre().length).toBe(ARTIFACT_CHUNK - 1); // the split "é" waits for its second byte
    for (let i = 0; i < 5 && screen.queryByRole('button', { name: /Load more/ }); i++) {
      fireEvent.click(screen.getByRole('button', { name: /Load more/ }));
      await act(tick);
    }
    expect(log.every(([, n]) => n <= ARTIFACT_CHUNK)).toBe(true);
    expect(log.map(([o]) => o)).toEqual([0, ARTIFACT_CHUNK, 2 * ARTIFACT_CHUNK]);
    expect(pre()).toBe(text);
    expect(container.querySelector('.artifact-text b')).toBeNull(); // shown as text, never HTML
    expect(screen.queryByRole('button', { name: /Load more/ })).toBeNull();
    // Closing and opening again keeps what was read; nothing is fetched twice.
    fireEvent.click(toggle);
    fireEvent.click(toggle);
    await act(tick);
    expect(log).toHaveLength(3);
    expect(pre()).toBe(text);
  });

  it('shows a failed read and tries the same range again', async () => {
    const log: [number, number][] = [];
    const fail = { next: true };
    render(
      <ArtifactReaderContext.Provider value={reader(log, fail)}>
        <ArtifactOutput artifact={artifact} />
      </ArtifactReaderContext.Provider>,
    );
    fireEvent.click(screen.getByRole('button', { name: /Full output/ }));
    await act(tick);
    expect(screen.getByRole('alert').textContent).toContain('offline');
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await act(tick);
    expect(log.map(([o]) => o)).toEqual([0, 0]);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getByRole('button', { name: /Load more/ })).toBeTruthy();
  });

  it('names the output without a reader or when it was not kept', () => {
    const { container, rerender } = render(<ArtifactOutput artifact={artifact} />);
    expect(container.querySelector('button')).toBeNull();
    expect(container.textContent).toContain('Full output: 142.1 KiB');
    rerender(
      <ArtifactReaderContext.Provider value={reader([])}>
        <ArtifactOutput artifact={{ ...artifact, available: false }} />
      </ArtifactReaderContext.Provider>,
    );
    expect(container.querySelector('button')).toBeNull();
    expect(container.textContent).toContain('not available');
  });
});
