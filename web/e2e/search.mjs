// Search in the browser: the field over the conversation list finds an entry
// deep in the 300,000-message conversation, opening a hit loads a bounded
// window around it with the hit marked, the link (/c/{id}?at={entry})
// reloads to the same place, a malformed query says what is wrong, and all
// of it works at phone width.
import { assert, openApp } from './harness.mjs';

// Prompts of the first day of "big": hundreds of thousands of entries
// before its end.
const DEEP = '"why does the" role:prompt conversation:big before:2026-01-02';

async function search(page, q) {
  const field = page.getByRole('searchbox', { name: 'Search conversations' });
  await field.fill(q);
  // The first search builds the index of every conversation (the big one
  // included), which takes a while on a busy machine.
  await page.waitForSelector('.search-results li, [data-testid="search-error"]', { timeout: 180_000 });
}

async function landsAt(page, entry) {
  await page.waitForFunction((e) => document.querySelector('.search-hit-mark')?.getAttribute('data-message-id') === e || document.querySelector('.search-hit-mark')?.getAttribute('data-row-id') === e, entry, { timeout: 60_000 });
  const st = await page.evaluate((e) => {
    const rows = document.querySelectorAll('[data-slot="0"] .row');
    const el = document.querySelector('.search-hit-mark');
    const col = document.querySelector('[data-slot="0"] .message-column');
    const b = el.getBoundingClientRect();
    const c = col.getBoundingClientRect();
    return { rows: rows.length, visible: b.bottom > c.top && b.top < c.bottom, path: location.pathname + location.search, e };
  }, entry);
  assert(st.rows > 0 && st.rows < 2000, `the window holds ${st.rows} rows, not a bounded window`);
  assert(st.visible, 'the hit is not in view');
  assert(st.path.endsWith(`/c/big?at=${encodeURIComponent(entry)}`), `the URL is ${st.path}`);
}

export function searchTests(test) {
  test('search finds an entry deep in a 300,000-message conversation and opens a bounded window at it, marked; the link reloads there', async (h) => {
    const { context, page, errors } = await openApp(h.url);
    await search(page, DEEP);
    const first = page.locator('.search-results li').first();
    const entry = await first.getAttribute('data-hit-entry');
    assert(entry && (await first.getAttribute('data-hit-conversation')) === 'big', `first hit ${entry}`);
    assert((await first.locator('mark').count()) > 0, 'the snippet marks no word');
    const n = parseInt(entry.split('-').pop(), 36); // gen's IDs count in base 36
    assert(n < 200_000, `the hit ${entry} is not deep`);
    await first.click();
    await landsAt(page, entry);
    // Stepping to the next hit moves the mark.
    const second = await page.locator('.search-results li').nth(1).getAttribute('data-hit-entry');
    await page.locator('.search-results li').nth(1).click();
    await landsAt(page, second);
    // The link is shareable: a fresh tab at it lands on the same entry.
    const fresh = await openApp(`${h.base}c/big?at=${encodeURIComponent(second)}#token=${encodeURIComponent(h.token)}`);
    await landsAt(fresh.page, second);
    await fresh.context.close();
    // A malformed query says what is wrong.
    await search(page, '"unclosed');
    const msg = await page.getByTestId('search-error').textContent();
    assert(/quote is not closed/.test(msg), `error: ${msg}`);
    assert(errors.filter((e) => !/\b400\b/.test(e)).length === 0, errors.join('\n'));
    await context.close();
  });

  test('at phone width the search sits in the conversation list and opens a hit full width', async (h) => {
    const { context, page } = await openApp(h.url, { viewport: { width: 390, height: 844 } });
    await page.getByRole('button', { name: 'Conversations' }).first().click();
    await search(page, DEEP);
    const box = await page.getByRole('searchbox', { name: 'Search conversations' }).boundingBox();
    assert(box && box.width > 150, `the field is ${box?.width}px wide`);
    const first = page.locator('.search-results li').first();
    const entry = await first.getAttribute('data-hit-entry');
    await first.click();
    await landsAt(page, entry);
    const open = await page.evaluate(() => document.querySelector('[data-testid="app"]').dataset.listOpen);
    assert(open === 'false', 'the list stays over the conversation');
    await context.close();
  });
}
