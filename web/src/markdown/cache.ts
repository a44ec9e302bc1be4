// A bounded LRU of rendered markdown.
//
// Rendering (marked + DOMPurify) is the costly part of painting a long chat, and
// the same sources render again on every scroll and pane switch. The cache is
// keyed by the markdown source and holds only the sanitized output of the
// render function it was built with, so a hit returns exactly what a miss would
// have returned: the cache can never hand out unsanitized HTML.
//
// Cost of an entry, in bytes: 2 × (source length + output length). JavaScript
// strings are UTF-16, and .length counts UTF-16 code units, so two bytes per
// unit is the estimate of what the two strings hold in memory. It ignores
// per-object overhead on purpose: the budget bounds content, not the heap.

/** Default limits: at most 256 entries and 8 MiB of estimated content. */
export const DEFAULT_MAX_ENTRIES = 256;
export const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

export interface MarkdownCacheOptions {
  maxEntries?: number;
  maxBytes?: number;
}

/** entryCost is the estimated size in bytes of one cached source and output. */
export function entryCost(source: string, output: string): number {
  return 2 * (source.length + output.length);
}

/**
 * MarkdownCache renders through render and keeps results in least-recently-used
 * order within an entry count and a byte budget. An entry that alone exceeds
 * the budget is rendered and returned but not kept. Not shared across threads:
 * the browser calls it from the main thread only.
 */
export class MarkdownCache {
  readonly maxEntries: number;
  readonly maxBytes: number;
  // Map iteration order is insertion order: the first key is the least recent.
  private readonly entries = new Map<string, string>();
  private bytesUsed = 0;

  constructor(
    private readonly renderFn: (source: string) => string,
    options: MarkdownCacheOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** render returns the sanitized HTML for source, from the cache when it can. */
  render(source: string): string {
    const hit = this.entries.get(source);
    if (hit !== undefined) {
      this.entries.delete(source);
      this.entries.set(source, hit);
      return hit;
    }
    const output = this.renderFn(source);
    const cost = entryCost(source, output);
    if (cost > this.maxBytes) return output;
    this.entries.set(source, output);
    this.bytesUsed += cost;
    for (const [key, value] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytesUsed <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytesUsed -= entryCost(key, value);
    }
    return output;
  }

  /** has reports whether source is cached, without changing its recency. */
  has(source: string): boolean {
    return this.entries.has(source);
  }

  /** keys lists cached sources from least to most recently used. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.bytesUsed;
  }

  clear(): void {
    this.entries.clear();
    this.bytesUsed = 0;
  }
}
