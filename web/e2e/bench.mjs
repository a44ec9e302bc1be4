// The web bench (`make web-bench`; not part of `make test`): in real Chromium
// against a real `folio serve`, for a 300,000-message and a 3,000-message
// conversation, it prints
//   - time from clicking the conversation to the first painted row,
//   - frame intervals while scrolling rapidly upward through history,
//   - the JS heap retained (after a forced GC) after paging a long way,
//     and how many pages, rows and measurements the window held.
// Figures are printed, never asserted: they depend on the machine.
import { existsSync } from 'node:fs';
import { browserPath, closeHarness, item, openApp, setupHarness } from './harness.mjs';

if (!existsSync(browserPath)) {
  console.log(`web-bench: SKIPPED: ${browserPath} not found`);
  process.exit(0);
}

const PAGES = Number(process.env.FOLIO_BENCH_PAGES ?? 150);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function measure(h, title) {
  const { context, page } = await openApp(h.url);
  const cdp = await context.newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  const heap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    return (await cdp.send('Runtime.getHeapUsage')).usedSize;
  };
  const key = `${title}||0`;
  // First paint: click → the first row is in the DOM and a frame has painted.
  const handle = await item(page, title).elementHandle();
  const firstPaint = await page.evaluate(async (el) => {
    const t0 = performance.now();
    el.click();
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      if (document.querySelector('[data-slot="0"] .row')) break;
    }
    await new Promise((r) => requestAnimationFrame(r));
    return performance.now() - t0;
  }, handle);
  await page.waitForFunction((k) => window.__folio.cache.peek(k)?.getState().window.pages.length > 0, key);
  const heapStart = await heap();
  // Rapid scrolling: 3 s of frames, each one scrolling 600 px further up.
  const frames = await page.evaluate(async () => {
    const col = document.querySelector('[data-slot="0"] .message-column');
    const out = [];
    let last = performance.now();
    const end = last + 3000;
    while (performance.now() < end) {
      col.scrollTop = Math.max(0, col.scrollTop - 600);
      col.dispatchEvent(new Event('scroll'));
      await new Promise((r) => requestAnimationFrame(r));
      const now = performance.now();
      out.push(now - last);
      last = now;
    }
    return out;
  });
  // Paging a long way: up to PAGES pages toward the start, one at a time.
  const paged = await page.evaluate(
    async ([k, max]) => {
      const v = window.__folio.cache.peek(k);
      const col = document.querySelector('[data-slot="0"] .message-column');
      let n = 0;
      const t0 = performance.now();
      while (n < max && v.getState().window.hasMoreBefore) {
        const first = v.getState().window.pages[0].first;
        col.scrollTop = 0;
        col.dispatchEvent(new Event('scroll'));
        const deadline = performance.now() + 10000;
        while (v.getState().window.pages[0].first === first && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        n++;
      }
      const s = v.getState();
      return {
        pages: n,
        ms: performance.now() - t0,
        windowPages: s.window.pages.length,
        rows: s.rows.length,
        held: s.window.held.size,
        heights: window.__folio.cache.heights.get(k)?.size ?? 0,
        mounted: document.querySelectorAll('[data-slot="0"] .row[data-mounted="true"]').length,
        reachedStart: !s.window.hasMoreBefore,
      };
    },
    [key, PAGES],
  );
  const heapEnd = await heap();
  await context.close();
  return { firstPaint, frames, paged, heapStart, heapEnd };
}

const h = await setupHarness();
try {
  for (const title of ['big', 'small']) {
    const r = await measure(h, title);
    const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    console.log(`${title === 'big' ? '300,000' : '3,000'} messages (${title}):`);
    console.log(`  first paint after click: ${r.firstPaint.toFixed(0)} ms`);
    console.log(
      `  frame interval while scrolling: p50 ${pct(r.frames, 50).toFixed(1)} ms, p95 ${pct(r.frames, 95).toFixed(1)} ms, max ${Math.max(...r.frames).toFixed(1)} ms over ${r.frames.length} frames`,
    );
    console.log(
      `  paged ${r.paged.pages} pages in ${(r.paged.ms / 1000).toFixed(1)} s${r.paged.reachedStart ? ' (reached the start)' : ''}: window ${r.paged.windowPages} pages, ${r.paged.rows} rows, ${r.paged.held} entries, ${r.paged.heights} heights, ${r.paged.mounted} mounted`,
    );
    console.log(`  JS heap after GC: ${mib(r.heapStart)} at open, ${mib(r.heapEnd)} after paging`);
  }
} finally {
  await closeHarness();
}
