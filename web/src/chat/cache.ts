// The views kept per tab: at most four cached conversation windows, least
// recently used first out. A view shown in a pane or with a request in flight
// is not evicted, so the count may exceed four for a moment; it shrinks as
// soon as those views are let go. Deleting a conversation releases its views'
// page references at once.
import type { Anchor } from './view';

export const MAX_CACHED = 4;

/** What the cache needs of a view. */
export interface Cacheable {
  readonly conversation: string;
  readonly busy: boolean;
  dispose(): void;
}

export class ViewCache<V extends Cacheable> {
  private views = new Map<string, V>(); // insertion order is recency
  private shown = new Map<string, number>();
  /** Saved reading anchors by view key; they outlive the views. */
  readonly anchors = new Map<string, Anchor>();
  /** Heights of measured rows by view key (forgotten with the view). */
  readonly heights = new Map<string, Map<string, number>>();

  constructor(
    private readonly make: (key: string) => V,
    private readonly limit = MAX_CACHED,
  ) {}

  get size(): number {
    return this.views.size;
  }

  /** peek returns the view for key without touching its recency (tests, bench). */
  peek(key: string): V | undefined {
    return this.views.get(key);
  }

  keys(): string[] {
    return [...this.views.keys()];
  }

  /** acquire returns the view for key (made if needed), marks it shown and most recent. */
  acquire(key: string): V {
    let v = this.views.get(key);
    if (v) this.views.delete(key);
    else v = this.make(key);
    this.views.set(key, v);
    this.shown.set(key, (this.shown.get(key) ?? 0) + 1);
    this.trim();
    return v;
  }

  /** release marks the view as no longer shown by one pane. */
  release(key: string): void {
    const n = (this.shown.get(key) ?? 0) - 1;
    if (n > 0) this.shown.set(key, n);
    else this.shown.delete(key);
    this.trim();
  }

  /** trim evicts least recently used views that are neither shown nor busy. */
  trim(): void {
    for (const [key, v] of this.views) {
      if (this.views.size <= this.limit) break;
      if (this.shown.has(key) || v.busy) continue;
      this.drop(key);
    }
  }

  /** forgetConversation drops every view of a deleted conversation. */
  forgetConversation(id: string): void {
    for (const [key, v] of [...this.views]) {
      if (v.conversation !== id) continue;
      this.drop(key);
      this.anchors.delete(key);
    }
  }

  private drop(key: string) {
    this.views.get(key)?.dispose();
    this.views.delete(key);
    this.heights.delete(key);
  }
}
