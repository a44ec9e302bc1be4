import { render, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ArtifactReaderContext } from './ArtifactOutput';
import type { ArtifactReader } from './ArtifactOutput';
import { PresentationView } from './presenters';

const view = (payload: Record<string, unknown>) => ({ schema: 'folio.mcp.progress', version: 1, revision: 2, payload });
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('folio.mcp.progress', () => {
  it('shows the latest progress while the call runs', () => {
    const { container } = render(
      <PresentationView presentation={view({ server: 'demo', tool: 'progress', status: 'running', progress: 2, total: 4, message: 'step 2 of 4', updates: 2 })} />,
    );
    expect(container.querySelector('.presentation-mcp-head')!.textContent).toBe('demo · progress · running');
    expect(container.querySelector('progress')!.getAttribute('value')).toBe('2');
    expect(container.querySelector('.presentation-mcp-count')!.textContent).toBe('2/4');
    expect(container.textContent).toContain('step 2 of 4');
  });

  it('shows the result: text, the image read from its artifact, a link', async () => {
    const reads: [string, number, number][] = [];
    const reader: ArtifactReader = async (ref, offset, length) => {
      reads.push([ref, offset, length]);
      return { bytes: PNG.slice(offset, offset + length), offset, total: PNG.length, final: true };
    };
    const { container } = render(
      <ArtifactReaderContext.Provider value={reader}>
        <PresentationView
          presentation={view({
            server: 'demo',
            tool: 'progress',
            status: 'ok',
            progress: 4,
            total: 4,
            content: [
              { type: 'text', text: 'counted 4 steps' },
              { type: 'image', contentType: 'image/png', bytes: PNG.length, item: 'image-1', ref: 'aa'.repeat(16) },
              { type: 'resource_link', uri: 'https://example.test/r', name: 'report' },
              { type: 'resource_link', uri: 'javascript:alert(1)', name: 'bad' },
            ],
          })}
        />
      </ArtifactReaderContext.Provider>,
    );
    expect(container.querySelector('progress')).toBeNull();
    expect(container.querySelector('.presentation-mcp-text')!.textContent).toBe('counted 4 steps');
    expect(container.querySelector('figcaption')!.textContent).toContain('image image/png · 8 B');
    await waitFor(() => expect(container.querySelector('.presentation-mcp-image img')).not.toBeNull());
    expect(container.querySelector('img')!.getAttribute('src')).toBe(`data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`);
    expect(reads).toEqual([['aa'.repeat(16), 0, PNG.length]]);
    const links = container.querySelectorAll('.presentation-mcp-link a');
    expect(links.length).toBe(1);
    expect(links[0]!.getAttribute('href')).toBe('https://example.test/r');
    expect(container.textContent).toContain('bad');
  });

  it('names an image it cannot show without reading anything', () => {
    const { container } = render(
      <PresentationView
        presentation={view({ server: 's', tool: 't', status: 'ok', content: [{ type: 'image', contentType: 'image/svg+xml', bytes: 10, ref: 'bb'.repeat(16) }] })}
      />,
    );
    expect(container.querySelector('img')).toBeNull();
    expect(container.textContent).toContain('image image/svg+xml · 10 B');
  });
});
