// `make screenshots`: PNGs of the app's main states into docs/screenshots/:
// a streaming reply, an expanded execution strip, math, a failed reply with
// Retry, highlighted code and a table, an approval, split panes, the phone
// width and the dark theme; a new chat's first screen and a refused message,
// at desktop and phone width. Runs the real server over a small generated
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
    await page.getByRole('button', { name: 'Actions for tools' }).click();
    await page.getByRole('menuitem', { name: 'Open beside' }).click();
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
    await open(page, 'code');
    await page.screenshot({ path: join(out, 'code.png') });
    // An approval, shown by the shell tool's presenter.
    await h.create('approval');
    await page.reload();
    await page.waitForSelector('[data-testid="app"]');
    await item(page, 'approval').click();
    await page.waitForTimeout(300);
    await page.getByRole('textbox', { name: 'Message' }).fill('tools');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.approval', { timeout: 20000 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(out, 'approval.png') });
    await page.getByRole('button', { name: 'Stop' }).click();
    await context.close();
  }
  {
    const { context, page } = await openApp(h.url, { colorScheme: 'light', viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    await page.getByRole('button', { name: 'Conversations' }).first().click();
    await open(page, 'code');
    await page.getByRole('textbox', { name: 'Message' }).fill('Could you explain the table above in two sentences?');
    await page.screenshot({ path: join(out, 'phone.png') });
    await context.close();
  }
  {
    const { context, page } = await openApp(h.url, { colorScheme: 'dark' });
    await open(page, 'tools');
    for (const b of await page.$$('.strip-summary')) await b.click();
    await page.screenshot({ path: join(out, 'dark.png') });
    await context.close();
  }
  for (const [suffix, viewport] of [
    ['', { width: 1200, height: 800 }],
    ['-phone', { width: 390, height: 844 }],
  ]) {
    const { context, page, ws } = await openApp(h.url, { colorScheme: 'light', viewport, deviceScaleFactor: suffix ? 2 : 1 });
    await page.waitForSelector('[data-slot="0"] [data-testid="welcome"] .welcome-demo');
    if (!suffix) await item(page, 'tools').waitFor();
    await page.screenshot({ path: join(out, `first-screen${suffix}.png`) });
    // A refused message: what the server answers while a terminal holds the conversation.
    const id = await h.create(`refused${suffix}`);
    await page.goto(new URL(`c/${encodeURIComponent(id)}`, h.url).href);
    await page.waitForSelector('[data-slot="0"] .composer');
    ws.rejectNextSend('locked');
    await page.getByRole('textbox', { name: 'Message' }).fill('Summarize the README in three bullet points');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="refused-draft"]');
    await page.screenshot({ path: join(out, `refused${suffix}.png`) });
    await context.close();
  }
  console.log(`screenshots written to ${out}`);
} finally {
  await closeHarness();
}
