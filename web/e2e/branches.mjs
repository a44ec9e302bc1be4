// Browser tests of branches against the real `folio serve` and the demo
// model: edit-and-resend from the UI, ‹ n/m › navigation that keeps the
// reader at the edited message, a stale token during a switch, and the graph
// fetched only when its panel opens. run.mjs registers these.
import { join } from 'node:path';
import { assert, item, openApp, shots } from './harness.mjs';

const pane = '[data-slot="0"]';

const userTexts = (page) => page.$$eval(`${pane} .user-text`, (els) => els.map((e) => e.textContent));

async function lastReplyCompleted(page) {
  await page.waitForFunction((p) => {
    const b = [...document.querySelectorAll(`${p} .bubble-assistant`)].at(-1);
    return b && b.dataset.state === 'completed' && b.querySelector('.markdown');
  }, pane);
}

// settled: the pane's view has a loaded window, no request or intent in flight.
const settled = (page, key) =>
  page.waitForFunction((k) => {
    const v = window.__folio.cache.peek(k);
    const s = v?.getState();
    return s && s.window.loaded && !s.loading && !s.intent;
  }, key);

const branchPos = (page, want) => page.waitForFunction(([p, w]) => document.querySelector(`${p} .branch-pos`)?.textContent === w, [pane, want]);

export function branchTests(test) {
  test('edit and resend, ‹ 1/2 › and ‹ 2/2 ›, a stale token during a switch, and the graph on demand', async (h) => {
    const { context, page, errors, ws } = await openApp(h.url);
    const graphRequests = [];
    page.on('request', (r) => r.url().includes('/graph') && graphRequests.push(r.url()));
    const id = await h.create('branching');
    const key = `${id}||0`;
    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'branching').click();
    await page.waitForFunction((k) => window.__folio.cache.peek(k)?.getState().window.loaded, key);

    await page.getByRole('textbox', { name: 'Message' }).fill('hello there');
    await page.keyboard.press('Enter');
    await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello there'), pane);
    await lastReplyCompleted(page);
    const originalReply = await page.$eval(`${pane} .bubble-assistant .markdown`, (e) => e.textContent);
    assert((await page.$$(`${pane} [data-testid="branch-nav"]`)).length === 0, 'a linear conversation shows ‹ n/m ›');

    // Edit from the keyboard: focus the action, Enter opens the editor with the text.
    await page.locator(`${pane} .bubble-user button[aria-label="Edit message"]`).focus();
    await page.keyboard.press('Enter');
    const editor = page.locator(`${pane} textarea[aria-label="Edit message"]`);
    assert((await editor.inputValue()) === 'hello there', 'the editor does not hold the message text');
    await editor.fill('hello edited');
    await editor.press('Enter');
    await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello edited'), pane);
    await branchPos(page, '2/2');
    await lastReplyCompleted(page);
    await settled(page, key);
    assert(JSON.stringify(await userTexts(page)) === JSON.stringify(['hello edited']), `edited head shows ${JSON.stringify(await userTexts(page))}`);
    const editedId = await page.$eval(`${pane} .bubble-user`, (e) => e.dataset.messageId);
    await page.screenshot({ path: join(shots, 'branch-edited.png') });

    // Back to the original: ‹ 1/2 ›, its text and reply, and the reader kept at that message.
    await page.getByRole('button', { name: 'Previous version' }).click();
    await branchPos(page, '1/2');
    await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello there'), pane);
    await settled(page, key);
    assert(JSON.stringify(await userTexts(page)) === JSON.stringify(['hello there']), `original head shows ${JSON.stringify(await userTexts(page))}`);
    assert((await page.$eval(`${pane} .bubble-assistant .markdown`, (e) => e.textContent)) === originalReply, 'the original reply changed');
    const originalId = await page.$eval(`${pane} .bubble-user`, (e) => e.dataset.messageId);
    assert(originalId !== editedId, 'the two versions share an entry ID');
    await page.waitForFunction(([k, want]) => window.__folio.cache.peek(k).getState().focus?.id === want, [key, originalId]);
    const inView = await page.evaluate(([p, mid]) => {
      const col = document.querySelector(`${p} .message-column`).getBoundingClientRect();
      const row = document.querySelector(`${p} [data-row-id="${mid}"]`)?.getBoundingClientRect();
      return !!row && row.bottom > col.top && row.top < col.bottom;
    }, [pane, originalId]);
    assert(inView, 'the edited message is not in view after the switch');

    // A stale token: with slow transport, ask for the latest page right
    // after clicking › (it carries the old head's token). The window must end
    // up holding exactly the new head's rows.
    const before = await page.evaluate((k) => window.__folio.cache.peek(k).getState().window.token, key);
    await page.evaluate(() => {
      // Record the view's page requests and how each ended.
      const c = window.__folio.client;
      const orig = c.request.bind(c);
      window.__pages = [];
      c.request = (f) => {
        const p = orig(f);
        if (f.type === 'page') {
          const rec = { token: f.token, head: f.head, anchor: f.anchor };
          window.__pages.push(rec);
          p.then(
            () => (rec.result = 'answered'),
            (e) => (rec.result = String(e.message)),
          );
        }
        return p;
      };
    });
    ws.setDelay(250);
    await page.getByRole('button', { name: 'Next version' }).click();
    await page.evaluate((k) => void window.__folio.cache.peek(k).jumpToLatest(), key);
    await branchPos(page, '2/2');
    ws.setDelay(0);
    await page.waitForFunction(
      ([k, old]) => {
        const s = window.__folio.cache.peek(k).getState();
        return s.window.token && s.window.token !== old && s.window.loaded && !s.loading && !s.intent;
      },
      [key, before],
    );
    await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello edited'), pane);
    const sent = await page.evaluate(() => window.__pages);
    const stale = sent.filter((r) => r.token === before);
    assert(stale.length >= 1, `no page request carried the old head's token: ${JSON.stringify(sent)}`);
    assert(sent.some((r) => r.token !== before && r.head === 'b1'), `no page of the new head: ${JSON.stringify(sent)}`);
    console.log(`     page requests around the switch: ${JSON.stringify(sent)}`);
    const w = await page.evaluate((k) => {
      const s = window.__folio.cache.peek(k).getState();
      return { ids: s.rows.map((r) => r.id), pages: s.window.pages.length };
    }, key);
    assert(JSON.stringify(await userTexts(page)) === JSON.stringify(['hello edited']), `after a stale answer the window shows ${JSON.stringify(await userTexts(page))}`);
    assert(new Set(w.ids).size === w.ids.length && !w.ids.includes(originalId) && w.ids.includes(editedId), `window rows ${JSON.stringify(w.ids)}`);

    // The graph: not requested until its panel opens; then both branches.
    assert(graphRequests.length === 0, `the graph was requested ${graphRequests.length} times before its view opened`);
    await page.locator(`${pane} .chat-header`).getByRole('button', { name: 'Graph' }).click();
    await page.waitForSelector(`${pane} [data-testid="graph-panel"] .graph-branch`);
    const heads = await page.$$eval(`${pane} .graph-branch`, (els) => els.map((e) => e.dataset.head));
    assert(heads.length === 2 && heads.includes('main'), `graph branches ${JSON.stringify(heads)}`);
    assert((await page.$$(`${pane} .graph-branch[data-head="main"] .graph-branch`)).length === 1, 'the edit is not drawn under the branch it forked from');
    assert(graphRequests.length === 1, `graph requests: ${graphRequests.length}`);
    await page.screenshot({ path: join(shots, 'branch-graph.png') });
    assert(errors.length === 0, errors.join('\n'));
    await context.close();
  });

  test('an edit while a turn runs is refused as busy and keeps the draft', async (h) => {
    const { context, page, errors } = await openApp(h.url);
    const id = await h.create('busy edit');
    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'busy edit').click();
    await page.waitForFunction((k) => window.__folio.cache.peek(k)?.getState().window.loaded, `${id}||0`);
    // The demo model's tool turn waits for approval: the turn stays running.
    await page.getByRole('textbox', { name: 'Message' }).fill('tools');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.approval button');
    await page.locator(`${pane} .bubble-user button[aria-label="Edit message"]`).click();
    const editor = page.locator(`${pane} textarea[aria-label="Edit message"]`);
    await editor.fill('tools, edited');
    await editor.press('Enter');
    await page.waitForSelector(`${pane} .edit-error`);
    assert(/still running/.test(await page.textContent(`${pane} .edit-error`)), 'no busy message');
    assert((await editor.inputValue()) === 'tools, edited', 'the draft was lost');
    assert((await page.$$(`${pane} [data-testid="branch-nav"]`)).length === 0, 'a refused edit made a branch');
    await page.getByRole('button', { name: 'Stop' }).click();
    assert(errors.length === 0, errors.join('\n'));
    await context.close();
  });
}
