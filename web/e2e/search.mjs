// Search in the browser: the field over the conversation list finds an entry
// deep in the 300,000-message conversation, opening a hit loads a bounded
// window around it with the hit marked, the link (/c/{id}?at={entry})
// reloads to the same place, a malformed query says what is wrong, and all
// of it works at phone width.
import { assert, item, openApp } from './harness.mjs';

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

// findQuery picks a number the generated big conversation has a handful of
// times, one of them deep, and returns its hits newest first as the
// server's find answers them.
async function findQuery(h) {
  for (const n of ['537', '912', '404', '777', '321', '650', '888', '123', '246', '975']) {
    const q = `${n} conversation:big`;
    const r = await fetch(`${h.base}api/v2/search?q=${encodeURIComponent(q)}&order=newest&limit=200`, { headers: { Authorization: `Bearer ${h.token}` } });
    const a = await r.json();
    const hits = a.hits.map((x) => x.entry).filter(Boolean);
    if (hits.length >= 4 && hits.length <= 40 && hits.some((e) => parseInt(e.split('-').pop(), 36) < 200_000)) return { word: n, hits };
  }
  throw new Error('no number with a handful of hits in big');
}

// marks waits until the window is at entry, marked, in view, in a bounded
// window, with the URL naming it.
async function marks(page, entry) {
  await page.waitForFunction(
    (e) => {
      const m = document.querySelector('.search-hit-mark');
      return m && [m.dataset.rowId, m.dataset.messageId, m.dataset.entryId, m.dataset.stepId, m.dataset.searchHit].includes(e);
    },
    entry,
    { timeout: 60_000 },
  );
  const st = await page.evaluate(() => {
    const rows = document.querySelectorAll('[data-slot="0"] .row');
    const b = document.querySelector('.search-hit-mark').getBoundingClientRect();
    const c = document.querySelector('[data-slot="0"] .message-column').getBoundingClientRect();
    return { rows: rows.length, visible: b.bottom > c.top && b.top < c.bottom, search: location.search };
  });
  assert(st.rows > 0 && st.rows < 2000, `the window holds ${st.rows} rows, not a bounded window`);
  assert(st.visible, `the hit ${entry} is not in view`);
  assert(new URLSearchParams(st.search).get('at') === entry, `the URL names ${st.search}, not ${entry}`);
}

// wordsMarked waits until the marked hit holds <mark> elements around the
// matched words (not the whole entry): each mark's text, folded as the search
// folds it, is one of words; one of them is in view.
async function wordsMarked(page, words) {
  await page.waitForFunction(() => document.querySelector('.search-hit-mark mark.search-hit-word') !== null, null, { timeout: 30_000 });
  const st = await page.evaluate(() => {
    const marks = [...document.querySelectorAll('.search-hit-mark mark.search-hit-word')];
    const col = document.querySelector('[data-slot="0"] .message-column').getBoundingClientRect();
    const fold = (w) => w.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();
    return {
      texts: marks.map((m) => fold(m.textContent)),
      inView: marks.some((m) => {
        const b = m.getBoundingClientRect();
        return b.width > 0 && b.bottom > col.top && b.top < col.bottom;
      }),
      entry: document.querySelector('.search-hit-mark').textContent.length,
      background: getComputedStyle(marks[0]).backgroundColor,
    };
  });
  assert(st.texts.length > 0 && st.texts.every((t) => words.includes(t)), `the marked words are ${JSON.stringify(st.texts)}, not ${JSON.stringify(words)}`);
  assert(st.inView, 'no marked word is in view');
  assert(st.background !== 'rgba(0, 0, 0, 0)', 'a marked word has no highlight');
}

async function status(page, text) {
  await page.waitForFunction((t) => document.querySelector('[data-testid="find-status"]')?.textContent === t, text, { timeout: 60_000 });
}

export function searchTests(test) {
  test('find inside a 300,000-message conversation steps from hit to hit, newest first, each in a bounded window with the hit marked', async (h) => {
    const { word, hits } = await findQuery(h);
    const n = hits.length;
    const { context, page, errors } = await openApp(h.url);
    await search(page, `${word} conversation:big`);
    const first = page.locator('.search-results li').first();
    const entry = await first.getAttribute('data-hit-entry');
    await first.click();
    await marks(page, entry);
    await wordsMarked(page, [word]);
    // Opened from a search, the find bar keeps its query and says which hit this is.
    const k = hits.indexOf(entry);
    assert(k >= 0, `the search's hit ${entry} is not among the find's ${hits}`);
    await status(page, `${k + 1} of ${n}`);
    const older = page.getByRole('button', { name: 'Next hit (older)' });
    const newer = page.getByRole('button', { name: 'Previous hit (newer)' });
    for (let i = k + 1; i < n; i++) {
      await older.click();
      await marks(page, hits[i]);
      await status(page, `${i + 1} of ${n}`);
    }
    assert(await older.isDisabled(), 'the oldest hit can still go older');
    assert(parseInt(hits[n - 1].split('-').pop(), 36) < 200_000, `the oldest hit ${hits[n - 1]} is not deep`);
    for (let i = n - 2; i >= 0; i--) {
      await newer.click();
      await marks(page, hits[i]);
    }
    await status(page, `1 of ${n}`);
    assert(await newer.isDisabled(), 'the newest hit can still go newer');
    // The keys: Enter older, Shift+Enter newer.
    const field = page.getByRole('searchbox', { name: 'Find in this conversation' });
    await field.press('Enter');
    await marks(page, hits[1]);
    await field.press('Shift+Enter');
    await marks(page, hits[0]);
    // A reload comes back to the same hit with the same find.
    await page.reload();
    await marks(page, hits[0]);
    await status(page, `1 of ${n}`);
    // A malformed query says what is wrong; Escape closes the bar.
    await field.fill('"open');
    await field.press('Enter');
    await page.waitForFunction(() => /quote is not closed/.test(document.querySelector('[data-testid="find-status"]')?.textContent ?? ''), null, { timeout: 30_000 });
    await field.press('Escape');
    await page.getByTestId('find-bar').waitFor({ state: 'detached' });
    assert(errors.filter((e) => !/\b400\b/.test(e)).length === 0, errors.join('\n'));
    await context.close();
  });

  test('at phone width the find button and ctrl+f find inside the open conversation, and the buttons step through its hits', async (h) => {
    const { word, hits } = await findQuery(h);
    const { context, page } = await openApp(h.url, { viewport: { width: 390, height: 844 } });
    await page.getByRole('button', { name: 'Conversations' }).first().click();
    await item(page, 'big').click();
    await page.waitForFunction(() => document.querySelector('[data-slot="0"] .chat-title')?.textContent === 'big');
    await page.getByRole('button', { name: 'Find in this conversation' }).click();
    const field = page.getByRole('searchbox', { name: 'Find in this conversation' });
    assert(await field.evaluate((el) => el === document.activeElement), 'the find field does not have the cursor');
    await field.fill(word);
    await field.press('Enter');
    await marks(page, hits[0]);
    await status(page, `1 of ${hits.length}`);
    await page.getByRole('button', { name: 'Next hit (older)' }).click();
    await marks(page, hits[1]);
    await wordsMarked(page, [word]);
    await status(page, `2 of ${hits.length}`);
    for (const name of ['Previous hit (newer)', 'Next hit (older)', 'Close find']) {
      const b = await page.getByRole('button', { name }).boundingBox();
      assert(b && b.x >= 0 && b.x + b.width <= 390 && b.width >= 16, `${name} is at ${JSON.stringify(b)}, not on a 390px screen`);
    }
    const bar = await page.getByTestId('find-bar').boundingBox();
    assert(bar && bar.width <= 390, `the find bar is ${bar?.width}px wide`);
    // ctrl+f puts the cursor back in the field.
    await page.locator('[data-slot="0"] .message-column').click();
    await page.keyboard.press('Control+f');
    assert(await field.evaluate((el) => el === document.activeElement), 'ctrl+f does not put the cursor in the find field');
    await context.close();
  });

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
    await wordsMarked(page, ['why', 'does', 'the']);
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
    await wordsMarked(page, ['why', 'does', 'the']);
    const open = await page.evaluate(() => document.querySelector('[data-testid="app"]').dataset.listOpen);
    assert(open === 'false', 'the list stays over the conversation');
    await context.close();
  });
}
