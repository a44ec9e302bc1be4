// Browser tests for what a new user meets first: a new chat's first screen
// (model, folder, demo hint, suggestions, the model picked before the first
// send), the header while the first turn runs, Esc, and every refusal the
// server can answer, each at desktop and phone width.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assert, item, openApp, shots, web } from './harness.mjs';

// The app's list of error codes (src/protocol/errors.ts, which a Vitest test
// checks against docs/protocol.md), read as text: Node runs this file as is.
const source = readFileSync(join(web, 'src/protocol/errors.ts'), 'utf8');
const ERROR_CODES = [...source.slice(source.indexOf('ERROR_CODES = ['), source.indexOf('] as const')).matchAll(/'([a-z-]+)'/g)].map((m) => m[1]);

const pane = '[data-slot="0"]';
const widths = [
  ['desktop', { width: 1200, height: 800 }],
  ['phone', { width: 390, height: 844 }],
];

/** noSideScroll fails when the page scrolls sideways. */
async function noSideScroll(page, what) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert(overflow <= 0, `${what}: the page scrolls sideways by ${overflow}px`);
}

/** inView says whether the element is inside the viewport. */
async function inView(page, selector) {
  return page.locator(selector).first().evaluate((el) => {
    const b = el.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && b.top >= 0 && b.left >= 0 && b.bottom <= innerHeight + 1 && b.right <= innerWidth + 1;
  });
}

async function openCreated(h, page, title) {
  const id = await h.create(title);
  await page.goto(new URL(`c/${encodeURIComponent(id)}`, h.url).href);
  await page.waitForSelector('[data-testid="app"]');
  await page.waitForFunction((k) => window.__folio.cache.peek(k)?.getState().window.loaded, `${id}||0`);
  return id;
}

const authed = (h, path) => fetch(new URL(path, h.base).href, { headers: { Authorization: `Bearer ${h.token}` } }).then((r) => r.json());

export function firstScreenTests(test) {
  for (const [name, viewport] of widths) {
    test(`a new chat's first screen shows the model, folder, demo hint and suggestions, and the model is picked before the first send (${name})`, async (h) => {
      const { context, page, errors } = await openApp(h.url, { viewport });
      await page.waitForSelector(`${pane} [data-testid="welcome"]`);
      const ws = await authed(h, 'api/v2/workspace');
      assert((await page.textContent('[data-testid="welcome-model"]')).includes('folio-demo'), `model: ${await page.textContent('[data-testid="welcome-model"]')}`);
      assert((await page.textContent('[data-testid="welcome-folder"]')) === ws.folder && ws.folder !== '', `folder: ${await page.textContent('[data-testid="welcome-folder"]')} vs ${ws.folder}`);
      assert(/offline demo model/.test(await page.textContent('[data-testid="demo-hint"]')), 'no demo hint');
      const suggestions = page.locator(`${pane} .suggestion`);
      assert((await suggestions.count()) >= 3, `${await suggestions.count()} suggestions`);
      // The picker is there before anything is sent, and lists both models.
      const picker = page.locator(`${pane} .model-picker`);
      await picker.waitFor();
      const options = await picker.locator('option').evaluateAll((o) => o.map((x) => x.value));
      assert(options.includes('local/offline-model') && options.some((o) => o.startsWith('demo/')), `models: ${options}`);
      assert(await inView(page, `${pane} .model-picker`), 'the model picker is off screen');
      await noSideScroll(page, name);
      await page.screenshot({ path: join(shots, `first-screen-${name}.png`) });
      await picker.selectOption('local/offline-model');
      assert((await page.textContent('[data-testid="welcome-model"]')).includes('offline-model'), 'the first screen does not follow the pick');
      // A suggestion goes into the composer; Enter sends it.
      const text = await suggestions.first().textContent();
      await suggestions.first().click();
      const box = page.getByRole('textbox', { name: 'Message' });
      assert((await box.inputValue()) === text, 'the suggestion did not reach the composer');
      // The header, from the send until the turn ends: the title or "New chat", never the raw ID.
      await page.evaluate(() => {
        window.__titles = [];
        const seen = () => {
          const t = document.querySelector('[data-slot="0"] .chat-title')?.textContent;
          if (t !== undefined && window.__titles.at(-1) !== t) window.__titles.push(t);
        };
        new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await box.press('Enter');
      await page.waitForFunction(() => /\/c\/./.test(location.pathname));
      const id = await page.evaluate(() => decodeURIComponent(location.pathname.split('/c/')[1]));
      await page.waitForFunction(() => [...document.querySelectorAll('[data-slot="0"] .bubble-assistant')].at(-1)?.dataset.state === 'failed');
      const titles = await page.evaluate(() => window.__titles);
      assert(!titles.some((t) => t.includes(id)), `the header showed the raw ID: ${JSON.stringify(titles)}`);
      assert(titles.includes('New chat') || titles.every((t) => t === text.slice(0, 48) || t.startsWith(text.slice(0, 20))), `titles: ${JSON.stringify(titles)}`);
      const models = await authed(h, `api/v2/models?conversation=${encodeURIComponent(id)}`);
      assert(models.current === 'local/offline-model', `the first turn ran on ${models.current}`);
      assert(errors.length === 0, errors.join('\n'));
      await context.close();
    });
  }

  test('Esc stops a running turn, as in the terminal', async (h) => {
    const { context, page, errors } = await openApp(h.url);
    await openCreated(h, page, 'escape key');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('tools');
    await box.press('Enter');
    await page.waitForSelector('.approval');
    await box.press('Escape');
    await page.waitForSelector(`${pane} [data-testid="stopped-marker"]`);
    assert(errors.length === 0, errors.join('\n'));
    await context.close();
  });

  for (const [name, viewport] of widths) {
    test(`a send refused because a terminal holds the conversation shows why, at the message, with Send again and Edit (${name})`, async (h) => {
      const { context, page, errors } = await openApp(h.url, { viewport });
      const id = await openCreated(h, page, `locked ${name}`);
      // Another folio process writes the conversation: a slow demo turn.
      const run = spawn(h.bin, ['run', '--data', h.data, '--dir', h.work, '--yes', '--log', join(h.data, 'conversations', `${id}.jsonl`), 'long'], {
        stdio: 'ignore',
        env: { ...process.env, FOLIO_DEMO_RATE: '40' },
      });
      const exited = new Promise((r) => run.on('exit', r));
      try {
        await page.waitForSelector(`${pane} .bubble-assistant`);
        const box = page.getByRole('textbox', { name: 'Message' });
        await box.fill('are you there?');
        await box.press('Enter');
        const card = page.locator('[data-testid="refused-draft"]');
        await card.waitFor();
        assert((await card.getAttribute('data-code')) === 'locked', `code ${await card.getAttribute('data-code')}`);
        assert(/Another folio process is writing this conversation/.test(await card.textContent()), await card.textContent());
        assert((await card.locator('.draft-text').textContent()) === 'are you there?', 'the card lost the text');
        assert((await box.inputValue()) === 'are you there?', 'the text is not the draft again');
        assert(await inView(page, '[data-testid="refused-draft"] .draft-actions'), 'the card’s actions are off screen');
        await noSideScroll(page, name);
        await page.screenshot({ path: join(shots, `refused-${name}.png`) });
      } finally {
        run.kill('SIGINT');
      }
      await exited;
      // The terminal is gone: Send again goes through under a new command.
      await page.locator('[data-testid="refused-draft"]').getByRole('button', { name: 'Send again' }).click();
      await page.waitForFunction(() => [...document.querySelectorAll('[data-slot="0"] .user-text')].some((u) => u.textContent === 'are you there?'));
      assert((await page.locator('[data-testid="refused-draft"]').count()) === 0, 'the card stayed');
      assert(errors.length === 0, errors.join('\n'));
      await context.close();
    });

    test(`every error code the protocol names has a visible sentence at the message (${name})`, async (h) => {
      const { context, page, errors, ws } = await openApp(h.url, { viewport });
      await openCreated(h, page, `codes ${name}`);
      const box = page.getByRole('textbox', { name: 'Message' });
      for (const code of ERROR_CODES) {
        ws.rejectNextSend(code);
        await box.fill(`try ${code}`);
        await box.press('Enter');
        if (code === 'cancelled') {
          // The stop gave it back: the draft card with Send and Discard.
          const back = page.locator('[data-testid="returned-draft"]');
          await back.waitFor();
          assert(/Not sent: the turn was stopped/.test(await back.textContent()), `cancelled: ${await back.textContent()}`);
          await back.getByRole('button', { name: 'Discard' }).click();
          await back.waitFor({ state: 'detached' });
          continue;
        }
        const card = page.locator(`[data-testid="refused-draft"][data-code="${code}"]`);
        await card.waitFor();
        const sentence = (await card.locator('.refusal-text').textContent()) ?? '';
        assert(sentence.length > 10 && !sentence.startsWith('The server refused this ('), `${code}: "${sentence}"`);
        assert(await inView(page, `[data-testid="refused-draft"][data-code="${code}"] .refusal-text`), `${code}: the sentence is off screen`);
        await card.getByRole('button', { name: 'Edit' }).click();
        await card.waitFor({ state: 'detached' });
        assert((await box.inputValue()) === `try ${code}`, `${code}: Edit did not give the text back`);
      }
      await noSideScroll(page, name);
      assert(errors.length === 0, errors.join('\n'));
      await context.close();
    });

    test(`a conversation that does not exist says so, links to the list and stops asking (${name})`, async (h) => {
      const { context, page, errors, ws } = await openApp(h.url, { viewport });
      await page.goto(new URL('c/does-not-exist', h.url).href);
      await page.waitForSelector('[data-testid="missing-conversation"]');
      assert((await page.textContent('[data-testid="missing-conversation"] h2')) === 'No such conversation', 'no headline');
      const opens = ws.count('type:open');
      await page.waitForTimeout(3000);
      assert(ws.count('type:open') === opens, `it asked ${ws.count('type:open') - opens} more times`);
      assert((await page.locator(`${pane} .composer`).count()) === 0, 'a composer under a missing conversation');
      await noSideScroll(page, name);
      await page.screenshot({ path: join(shots, `missing-${name}.png`) });
      await page.getByRole('button', { name: 'Show conversations' }).click();
      await page.waitForFunction(() => !location.pathname.includes('/c/'));
      await page.waitForSelector(`${pane} [data-testid="welcome"]`);
      assert(await page.locator('.conversation-item').first().isVisible(), 'the list is not shown');
      assert(errors.filter((e) => !/HTTP 404|status of 404/.test(e)).length === 0, errors.join('\n'));
      await context.close();
    });

    test(`without its token, or with a wrong one, the app says where the address comes from (${name})`, async (h) => {
      for (const [what, url, stale] of [
        ['no token', h.base, false],
        ['a wrong token', `${h.base}#token=${'w'.repeat(32)}`, true],
      ]) {
        const { context, page } = await openApp(url, { viewport, ready: '[data-testid="token-page"]' });
        const text = await page.textContent('[data-testid="token-page"]');
        assert(/folio serve/.test(text) && text.includes(`open ${new URL(h.base).origin}/#token=`), `${what}: ${text}`);
        assert(/earlier run/.test(text) === stale, `${what}: the sentence about an earlier run`);
        assert(await inView(page, '[data-testid="token-page"] h1'), `${what}: the headline is off screen`);
        await noSideScroll(page, `${name}, ${what}`);
        if (!stale) await page.screenshot({ path: join(shots, `token-${name}.png`) });
        await context.close();
      }
    });
  }

  for (const [name, viewport] of widths) {
    test(`a reply names its tool calls, shows every receipt, never ends on an empty bullet, and the edit buttons look like the app's (${name})`, async (h) => {
      const { context, page, errors } = await openApp(h.url, { viewport, timezoneId: 'UTC' });
      if (name === 'phone') await page.getByRole('button', { name: 'Conversations' }).first().click();
      await item(page, 'rough').click();
      await page.waitForSelector(`${pane} [data-testid="strip-tools"]`);
      const tools = await page.textContent(`${pane} [data-testid="strip-tools"]`);
      assert(tools === 'shell · ls -la, read README.md', `the strip names: ${tools}`);
      const strip = page.locator(`${pane} .strip-summary`).first();
      assert((await strip.getAttribute('aria-label')) === 'Functions ×2', `the strip's name: ${await strip.getAttribute('aria-label')}`);
      // The stopped answer's list ends with its last real item.
      const empty = await page.$$eval(`${pane} .bubble-assistant li`, (li) => li.filter((x) => x.textContent.trim() === '').length);
      assert(empty === 0, `${empty} empty bullet points`);
      // Both receipts, each as the terminal prints it.
      const receipts = await page.$$eval(`${pane} [data-testid="turn-receipt"]`, (r) => r.map((x) => x.textContent));
      assert(receipts.length === 2, `receipts: ${JSON.stringify(receipts)}`);
      const shown = h.show('rough');
      for (const line of receipts) assert(shown.includes(line), `receipt ${JSON.stringify(line)} is not the terminal's:\n${shown}`);
      await noSideScroll(page, name);
      await page.screenshot({ path: join(shots, `rough-${name}.png`) });
      // Edit's buttons are the app's buttons, not the browser's.
      await page.locator(`${pane} .bubble-user`).first().hover();
      await page.getByRole('button', { name: 'Edit message' }).first().click();
      const look = (sel) =>
        page.locator(sel).first().evaluate((b) => {
          const c = getComputedStyle(b);
          return { radius: c.borderRadius, height: Math.round(b.getBoundingClientRect().height), font: c.fontSize, bg: c.backgroundColor };
        });
      const send = await look(`${pane} .editor-actions button[type="submit"]`);
      const cancel = await look(`${pane} .editor-actions button[type="button"]`);
      const app = await look('.theme-toggle');
      assert(cancel.radius === app.radius && cancel.height === app.height && cancel.font === app.font, `Cancel ${JSON.stringify(cancel)} vs ${JSON.stringify(app)}`);
      assert(send.radius === app.radius && send.height === app.height && send.bg !== 'rgba(0, 0, 0, 0)' && send.bg !== app.bg, `Send edit ${JSON.stringify(send)}`);
      assert(errors.length === 0, errors.join('\n'));
      await context.close();
    });
  }

  for (const [name, viewport] of widths) {
    test(`the graph view draws the branch tree with the selected path marked, and a click switches branch (${name})`, async (h) => {
      const { context, page, errors } = await openApp(h.url, { viewport });
      const id = await openCreated(h, page, `tree ${name}`);
      const box = page.getByRole('textbox', { name: 'Message' });
      const settledReply = () => page.waitForFunction((p) => [...document.querySelectorAll(`${p} .bubble-assistant`)].at(-1)?.dataset.state === 'completed', pane);
      await box.fill('hello there');
      await box.press('Enter');
      await settledReply();
      await page.locator(`${pane} .bubble-user button[aria-label="Edit message"]`).click();
      const editor = page.locator(`${pane} textarea[aria-label="Edit message"]`);
      await editor.fill('hello edited');
      await editor.press('Enter');
      await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello edited'), pane);
      await settledReply();
      await page.locator(`${pane} .chat-header`).getByRole('button', { name: 'Graph' }).click();
      const drawing = page.locator(`${pane} [data-testid="graph-drawing"]`);
      await drawing.waitFor();
      const meta = await authed(h, `api/v2/conversations/${encodeURIComponent(id)}`);
      const nodes = await drawing.locator('.graph-node').evaluateAll((g) => g.map((x) => ({ head: x.dataset.branch, selected: x.classList.contains('graph-node-selected'), onPath: x.classList.contains('graph-on-path') })));
      assert(nodes.length === 2, `drawn nodes: ${JSON.stringify(nodes)}`);
      assert(nodes.find((n) => n.selected)?.head === meta.head && meta.head !== 'main', `selected ${JSON.stringify(nodes)} vs head ${meta.head}`);
      assert(nodes.every((n) => n.onPath), `the path from main to the edit is not marked: ${JSON.stringify(nodes)}`);
      assert((await drawing.locator('path.graph-edge.graph-on-path').count()) === 1, 'no marked edge');
      await noSideScroll(page, name);
      await page.screenshot({ path: join(shots, `graph-${name}.png`) });
      // A click on main switches to it: the server's head, the marks and the transcript follow.
      await drawing.locator('.graph-node[data-branch="main"]').click();
      await page.waitForFunction((p) => [...document.querySelectorAll(`${p} .user-text`)].some((u) => u.textContent === 'hello there'), pane);
      await page.waitForFunction((p) => document.querySelector(`${p} .graph-node-selected`)?.getAttribute('data-branch') === 'main', pane);
      assert((await authed(h, `api/v2/conversations/${encodeURIComponent(id)}`)).head === 'main', 'the server did not switch');
      const marked = await drawing.locator('.graph-node.graph-on-path').evaluateAll((g) => g.map((x) => x.dataset.branch));
      assert(JSON.stringify(marked) === '["main"]', `marked after the switch: ${JSON.stringify(marked)}`);
      assert(errors.length === 0, errors.join('\n'));
      await context.close();
    });
  }
}
