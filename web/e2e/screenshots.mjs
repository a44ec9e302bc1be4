// `make screenshots`: PNGs of the app's main states into docs/screenshots/:
// a streaming reply, an expanded execution strip, math, a failed reply, split
// panes and the dark theme. Runs the real server over a small generated
// conversation plus engine-written ones (offline demo model).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { browserPath, closeHarness, item, openApp, repo, setupHarness } from './harness.mjs';

if (!existsSync(browserPath)) {
  console.log(`screenshots: SKIPPED: ${browserPath} not found`);
  process.exit(0);
}
const out = join(repo, 'docs', 'screenshots');
mkdirSync(out, { recursive: true });
const h = await setupHarness({ messages: 3000 });
try {
  const open = async (page, title) => {
    await item(page, title).click();
    await page.waitForSelector('[data-slot="0"] .row');
    await page.waitForTimeout(300);
  };
  {
    const { context, page } = await openApp(h.url, { colorScheme: 'light' });
    await open(page, 'tools');
    for (const b of await page.$$('.strip-summary')) await b.click();
    for (const b of await page.$$('.step-head')) await b.click();
    await page.screenshot({ path: join(out, 'strip.png') });
    await open(page, 'math');
    await page.screenshot({ path: join(out, 'math.png') });
    await open(page, 'failure');
    await page.locator('.failure-details summary').click();
    await page.screenshot({ path: join(out, 'failure.png') });
    await open(page, 'big');
    await page.getByRole('button', { name: 'Open tools beside' }).click();
    await page.waitForSelector('[data-slot="1"] .row');
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(out, 'split.png') });
    // A streaming reply: a turn on the server's engine, caught mid-stream.
    await h.create('streaming');
    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'streaming').click();
    await page.waitForTimeout(300);
    await page.getByRole('textbox', { name: 'Message' }).fill('long');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-slot="0"] .bubble-assistant[data-state="streaming"] .markdown', { timeout: 20000 }).catch(() => {});
    await page.waitForTimeout(400);
    await page.screenshot({ path: join(out, 'streaming.png') });
    await context.close();
  }
  {
    const { context, page } = await openApp(h.url, { colorScheme: 'dark' });
    await open(page, 'tools');
    for (const b of await page.$$('.strip-summary')) await b.click();
    await page.screenshot({ path: join(out, 'dark.png') });
    await context.close();
  }
  console.log(`screenshots written to ${out}`);
} finally {
  await closeHarness();
}
