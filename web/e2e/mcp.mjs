// Browser test of an MCP tool's presentation against the real `folio serve`
// with the example MCP server (examples/mcpdemo) configured and the demo
// model calling it: progress replaced in place while the call runs, then
// the text and the image read from its artifact, the same after a reload.
// run.mjs registers these.
import { join } from 'node:path';
import { assert, item, openApp, shots } from './harness.mjs';

const pane = '[data-slot="0"]';

// expand opens every strip and step, so presentations are in the DOM.
async function expand(page) {
  for (const b of await page.$$(`${pane} .strip-summary[aria-expanded="false"]`)) await b.click();
}

const mcpView = (page) =>
  page.$$eval(`${pane} .presentation-mcp`, (els) =>
    els.map((e) => ({
      status: e.dataset.status,
      head: e.querySelector('.presentation-mcp-head')?.textContent,
      text: [...e.querySelectorAll('.presentation-mcp-text pre')].map((p) => p.textContent),
      caption: e.querySelector('figcaption')?.textContent,
      img: e.querySelector('.presentation-mcp-image img')?.naturalWidth ?? 0,
    })),
  );

export function mcpTests(test) {
  test('an MCP tool call shows live progress in place, then its text and image, the same after a reload', async (h) => {
    const { context, page, errors } = await openApp(h.url);
    const id = await h.create('mcp live');
    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'mcp live').click();
    await page.waitForFunction((cid) => window.__folio.cache.peek(`${cid}||0`)?.getState().window.loaded, id);
    // Record every distinct progress message and how many MCP views were
    // on the page at once, on every frame.
    await page.evaluate((p) => {
      window.__mcp = { messages: [], maxViews: 0, maxRunning: 0 };
      const tick = () => {
        const w = window.__mcp;
        const strips = document.querySelectorAll(`${p} .strip-summary[aria-expanded="false"]`);
        for (const s of strips) s.click();
        const views = document.querySelectorAll(`${p} .presentation-mcp`);
        w.maxViews = Math.max(w.maxViews, views.length);
        w.maxRunning = Math.max(w.maxRunning, document.querySelectorAll(`${p} .presentation-mcp-progress`).length);
        for (const m of document.querySelectorAll(`${p} .presentation-mcp-progress .presentation-mcp-message`)) {
          if (w.messages.at(-1) !== m.textContent) w.messages.push(m.textContent);
        }
        if (!w.stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }, pane);
    await page.getByRole('textbox', { name: 'Message' }).fill('/demo call demo__progress {"steps":5,"delay_ms":600}');
    await page.keyboard.press('Enter');
    await page.waitForFunction((p) => /step 3 of 5/.test(document.querySelector(`${p} .presentation-mcp-progress`)?.textContent ?? ''), pane, { timeout: 60_000 });
    await page.screenshot({ path: join(shots, 'mcp-progress.png') });
    await page.waitForFunction(() => [...document.querySelectorAll('.bubble-assistant')].at(-1)?.dataset.state === 'completed', null, { timeout: 60_000 });
    await expand(page);
    await page.waitForFunction((p) => (document.querySelector(`${p} .presentation-mcp-image img`)?.naturalWidth ?? 0) > 0, pane);
    const w = await page.evaluate(() => {
      window.__mcp.stop = true;
      return window.__mcp;
    });
    console.log(`     watched: ${JSON.stringify(w)}`);
    assert(w.messages.length >= 2, `saw too few progress values: ${JSON.stringify(w)}`);
    assert(w.maxViews === 1 && w.maxRunning <= 1, `progress was appended, not replaced: ${JSON.stringify(w)}`);
    for (let i = 1; i < w.messages.length; i++) {
      const n = (s) => Number(/step (\d+)/.exec(s)?.[1] ?? 0);
      assert(n(w.messages[i]) > n(w.messages[i - 1]), `progress went backwards: ${JSON.stringify(w.messages)}`);
    }
    const live = await mcpView(page);
    assert(live.length === 1 && live[0].status === 'ok' && live[0].head === 'demo · progress · ok', `final view ${JSON.stringify(live)}`);
    assert(live[0].text[0] === 'counted 5 steps' && /image image\/png/.test(live[0].caption) && live[0].img === 32, `final view ${JSON.stringify(live)}`);
    assert(
      await page.evaluate((p) => [...document.querySelectorAll(`${p} .markdown`)].some((m) => /returned: counted 5 steps/.test(m.textContent)), pane),
      'the model did not answer from the result',
    );
    await page.screenshot({ path: join(shots, 'mcp-result.png') });

    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'mcp live').click();
    await page.waitForSelector(`${pane} .execution-strip`);
    await expand(page);
    await page.waitForFunction((p) => (document.querySelector(`${p} .presentation-mcp-image img`)?.naturalWidth ?? 0) > 0, pane);
    const cold = await mcpView(page);
    assert(JSON.stringify(live) === JSON.stringify(cold), `live ${JSON.stringify(live)} vs reload ${JSON.stringify(cold)}`);
    assert(errors.length === 0, errors.join('\n'));
    await context.close();
  });

  test('an MCP call made by `folio run` shows its retained presentation', async (h) => {
    const { context, page, errors } = await openApp(h.url);
    await item(page, 'mcp').click();
    await page.waitForSelector(`${pane} .execution-strip`);
    await expand(page);
    await page.waitForFunction((p) => (document.querySelector(`${p} .presentation-mcp-image img`)?.naturalWidth ?? 0) > 0, pane);
    const v = await mcpView(page);
    assert(v.length === 1 && v[0].text[0] === 'counted 3 steps' && v[0].img === 32, `view ${JSON.stringify(v)}`);
    assert(errors.length === 0, errors.join('\n'));
    await context.close();
  });
}
