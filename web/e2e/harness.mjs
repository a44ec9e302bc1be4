// The browser suite's harness: builds the folio binary, lays out a temporary
// data folder (a generated 300,000-message conversation, a 3,000-message one,
// conversations written by the real engine with the offline demo model, and
// hand-written logs for math and an XSS corpus), starts `folio serve` on a
// loopback port, and launches Chromium. openApp routes the page's WebSocket
// through a controllable relay so tests can delay, hold, fail or drop frames
// (delayed transport) without touching the server.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const web = fileURLToPath(new URL('..', import.meta.url));
export const repo = join(web, '..');
export const shots = join(web, 'e2e', 'screenshots');
export const browserPath = process.env.FOLIO_CHROMIUM || '/usr/bin/chromium';
const truthy = (v) => v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
export const required = truthy(process.env.CI) || truthy(process.env.FOLIO_REQUIRE_SUITES);

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

let scratch;
let server;
let browser;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server?.kill();
    process.exit(1);
  });
}

const now = () => new Date().toISOString();
const line = (o) => `${JSON.stringify(o)}\n`;

function writeLog(dir, id, entries, title) {
  const head = { type: 'conversation', version: 3, conversationId: id, startedAt: '2026-01-01T00:00:00.000Z' };
  if (title) head.title = title;
  let text = line(head);
  for (const e of entries) text += line({ type: 'ui-append', at: now(), entries: [{ timestamp: now(), ...e }] });
  writeFileSync(join(dir, `${id}.jsonl`), text);
}

const MATH = [
  'The sample: \\(d_t\\) and \\(v_t = (d_t - d_{t+1}) / d_t\\), inline $x^2$.',
  '',
  '$$\\sum_{t=0}^{T-1} v_t$$',
  '',
  '\\[e^{i\\pi} + 1 = 0\\]',
  '',
  'Prices like $5 and $10 stay prose; `$PATH` stays code.',
].join('\n');

const XSS = [
  '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
  '<script>window.__xss=(window.__xss||0)+1</script>',
  '<svg onload="window.__xss=(window.__xss||0)+1"></svg>',
  '[click](javascript:window.__xss=1)',
  '<iframe src="javascript:window.__xss=1"></iframe>',
  '<a href="javascript:alert(1)">a</a>',
  '\\(\\href{javascript:alert(1)}{x}\\)',
  '<style>body{display:none}</style>',
].join('\n\n');

const CODE = [
  'A Go program:',
  '',
  '```go',
  'func main() {',
  '\tfmt.Println("hello")',
  '}',
  '```',
  '',
  '| option | meaning | default |',
  '|---|---|---|',
  '| optional | whether the flag may be left out entirely from the command line | false |',
  '| concurrency | how many requests run at the same time against the provider | 4 |',
].join('\n');

function fixtures(dir) {
  // A reply with the rough edges of issue 30: named tool calls, a stopped
  // answer cut after a list marker, and two turn receipts in one reply.
  writeLog(dir, 'rough', [
    { id: 'r-u', content: { kind: 'user', text: 'look around' } },
    { id: 'r-t1', content: { kind: 'tool', receipt: { app: 'shell', summary: '$ ls -la', status: 'ok', durationMs: 12, outputPreview: 'README.md' } } },
    { id: 'r-t2', content: { kind: 'tool', receipt: { app: 'read_file', summary: 'read README.md', status: 'ok', durationMs: 3 } } },
    { id: 'r-a1', content: { kind: 'agent', markdown: 'Found two things.' } },
    { id: 'r-rc1', content: { kind: 'turn-receipt', steps: [{ durationMs: 1500, promptTokens: 10, completionTokens: 20 }], finishedAt: 1767225600000 } },
    { id: 'r-a2', content: { kind: 'agent', markdown: 'Next steps:\n\n- read the docs\n- ' } },
    { id: 'r-s', content: { kind: 'stopped', summary: { elapsedMs: 2700 } } },
    { id: 'r-rc2', content: { kind: 'turn-receipt', steps: [{ durationMs: 2700, promptTokens: 30, completionTokens: 5 }], finishedAt: 1767225660000 } },
  ], 'rough');
  writeLog(dir, 'code', [
    { id: 'k-u', content: { kind: 'user', text: 'Show me code and a table' } },
    { id: 'k-a', content: { kind: 'agent', markdown: CODE } },
  ]);
  writeLog(dir, 'branchy', [
    { id: 'b-u1', content: { kind: 'user', text: 'first question' } },
    { id: 'b-a1', content: { kind: 'agent', markdown: 'first answer' } },
    { id: 'b-u2', content: { kind: 'user', text: 'question on the old branch' } },
    { id: 'b-a2', content: { kind: 'agent', markdown: 'answer on the old branch' } },
  ]);
  writeLog(dir, 'math', [
    { id: 'm-u', content: { kind: 'user', text: 'Decay rates?' } },
    { id: 'm-a', content: { kind: 'agent', markdown: MATH } },
  ]);
  writeLog(
    dir,
    'xss',
    [
      { id: 'x-u', content: { kind: 'user', text: XSS } },
      { id: 'x-r', content: { kind: 'reasoning', text: XSS, label: '<img src=x onerror=alert(1)>' } },
      {
        id: 'x-t',
        content: {
          kind: 'tool',
          receipt: { app: 'shell', summary: XSS, status: 'failed', args: XSS, outputPreview: XSS, reason: XSS },
          invocationId: 'inv-<b>x</b>',
          presentation: { schema: 'folio.shell/terminal', version: 1, revision: 1, payload: { screen: XSS } },
        },
      },
      {
        id: 'x-t2',
        content: {
          kind: 'tool',
          receipt: { app: '<img src=x onerror=alert(1)>', summary: 'unknown schema', status: 'ok' },
          presentation: { schema: 'evil<script>', version: 9, revision: 1, payload: { html: XSS } },
        },
      },
      { id: 'x-a', content: { kind: 'agent', markdown: XSS } },
      { id: 'x-f', content: { kind: 'failure', reason: 'provider', detail: XSS, retryable: false } },
    ],
    'xss <b>title</b>',
  );
}

function run(bin, args, opts = {}) {
  const r = spawnSync(bin, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`${bin} ${args.join(' ')} failed: ${r.stderr}`);
  return r;
}

/** setupHarness builds everything and returns what tests need. */
export async function setupHarness({ messages = 300_000 } = {}) {
  scratch = mkdtempSync(join(tmpdir(), 'folio-e2e-'));
  // FOLIO_BIN uses a folio binary built elsewhere (e.g. from a clean checkout).
  const bin = process.env.FOLIO_BIN || join(scratch, 'folio');
  if (!process.env.FOLIO_BIN) run('go', ['build', '-o', bin, './cmd/folio'], { cwd: repo, stdio: 'inherit' });
  const data = join(scratch, 'data');
  const convs = join(data, 'conversations');
  const work = join(scratch, 'work');
  mkdirSync(convs, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'notes.txt'), 'hello from the test workspace\n');
  // The example MCP server, configured for every folio process here.
  const mcpdemo = join(scratch, 'mcpdemo');
  run('go', ['build', '-o', mcpdemo, './examples/mcpdemo'], { cwd: repo, stdio: 'inherit' });
  // A second model a new chat can pick before its first send: an
  // OpenAI-compatible server on a closed loopback port (its turns fail with
  // a transport error, which is all the first-screen test needs).
  writeFileSync(
    join(data, 'config.json'),
    JSON.stringify({ mcpServers: { demo: { command: mcpdemo } }, providers: { local: { type: 'openai', baseURL: 'http://127.0.0.1:9/v1', model: 'offline-model' } } }),
  );
  run(bin, ['gen', '--messages', String(messages), '--id', 'big', '--title', 'big', '--out', join(convs, 'big.jsonl')]);
  run(bin, ['gen', '--messages', '3000', '--seed', '2', '--id', 'small', '--title', 'small', '--out', join(convs, 'small.jsonl')]);
  fixtures(convs);
  // Each engine-made conversation is titled by its ID (a meta record), so
  // the tests find it by a name they know rather than by its first prompt.
  const engine = (id, prompt) => {
    const file = join(convs, `${id}.jsonl`);
    run(bin, ['run', '--data', data, '--dir', work, '--yes', '--log', file, prompt], { allowFail: true });
    appendFileSync(file, line({ type: 'meta', at: now(), title: id }));
  };
  engine('tools', 'tools');
  engine('failure', '/demo fail rate-limit');
  engine('live', 'hello');
  engine('mcp', '/demo call demo__progress {"steps":3,"delay_ms":20}');
  // The server's snapshot folder goes in the scratch folder (TMPDIR), so
  // its sweep of dead servers' folders never looks at anyone else's.
  const tmp = join(scratch, 'tmp');
  mkdirSync(tmp, { recursive: true });
  server = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--data', data, '--allow', 'demo__*'], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TMPDIR: tmp } });
  // The URL to open, as printed: http://127.0.0.1:PORT/#token=…
  const { url, base, token } = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /open ((http:\/\/127\.0\.0\.1:\d+\/)#token=(\S+))\n/.exec(out);
      if (m) resolve({ url: m[1], base: m[2], token: decodeURIComponent(m[3]) });
    });
    server.on('exit', (code) => reject(new Error(`folio serve exited with ${code} before listening`)));
  });
  browser = await chromium.launch({
    executablePath: browserPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    /** bin is the folio binary. */
    bin,
    /** url is the printed URL with the token in its fragment; base is the server's root. */
    url,
    base,
    token,
    tmp,
    data,
    /** work is the folder the tools work in (folio serve's --dir). */
    work,
    /** append writes entries to a conversation's log, as another process would. */
    append(id, entries) {
      appendFileSync(join(convs, `${id}.jsonl`), line({ type: 'ui-append', at: now(), entries: entries.map((e) => ({ timestamp: now(), ...e })) }));
    },
    /** supersede writes a superseding snapshot record (another branch selected elsewhere). */
    supersede(id, entries) {
      appendFileSync(join(convs, `${id}.jsonl`), line({ type: 'ui-transcript', at: now(), entries: entries.map((e) => ({ timestamp: now(), ...e })) }));
    },
    /** create makes a conversation through the HTTP API and returns its ID. */
    async create(title) {
      const r = await fetch(`${base}api/v2/conversations`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ title }),
      });
      return (await r.json()).id;
    },
    /** show is the terminal's classic rendering of a conversation's log (finish times in UTC). */
    show(id) {
      return run(bin, ['log', 'show', join(convs, `${id}.jsonl`)], { env: { ...process.env, TZ: 'UTC' } }).stdout;
    },
    /** run runs one real engine turn (demo model) into a conversation's log. */
    run(id, prompt) {
      return new Promise((resolve) => {
        const p = spawn(bin, ['run', '--data', data, '--dir', work, '--yes', '--log', join(convs, `${id}.jsonl`), prompt], { stdio: 'ignore' });
        p.on('exit', resolve);
      });
    },
  };
}

export async function closeHarness() {
  await browser?.close();
  server?.kill();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}

/** newContext is a fresh browser context, for pages that are not the app (an exported file). */
export function newContext(options = {}) {
  return browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
}

/** item finds a conversation in the list by its exact title. */
export function item(page, title) {
  const esc = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return page.locator('.conversation-item').filter({ has: page.locator('.conversation-title', { hasText: new RegExp(`^${esc}$`) }) });
}

/**
 * openApp opens the app in a fresh context, records page errors, console
 * errors (CSP violations included) and HTTP errors, and relays the WebSocket
 * through a control the test can steer.
 */
export async function openApp(url, { ready = '[data-testid="app"]', ...options } = {}) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  const ws = relay();
  await page.routeWebSocket(/\/api\/v2\/ws/, (route) => ws.attach(route));
  await page.goto(url);
  await page.waitForSelector(ready);
  return { context, page, errors, ws };
}

function relay() {
  let delay = 0;
  let last = 0;
  const fail = new Map(); // anchor → count
  const counts = new Map();
  let holding = false;
  const aroundIds = new Set();
  const reject = []; // codes for the next sends' rejected receipts
  const held = [];
  const routes = [];
  const later = (fn) => {
    const at = Math.max(Date.now() + delay, last);
    last = at;
    setTimeout(fn, at - Date.now());
  };
  return {
    attach(route) {
      routes.push(route);
      const up = route.connectToServer();
      route.onMessage((m) => {
        let f;
        try {
          f = JSON.parse(m);
        } catch {
          up.send(m);
          return;
        }
        counts.set(`type:${f.type}`, (counts.get(`type:${f.type}`) ?? 0) + 1);
        if (f.type === 'send' && reject.length > 0) {
          // The server's answer to a refused send, as the engine would give it.
          const code = reject.shift();
          later(() => route.send(JSON.stringify({ type: 'receipt', re: f.id, receipt: { commandId: f.commandId, conversation: f.conversation, kind: 'send', state: 'rejected', code, reason: `${code}: injected by the test relay` } })));
          return;
        }
        if (f.type === 'page') {
          const key = f.direction === 'around' ? 'around' : f.anchor === 'latest' ? 'latest' : f.direction;
          counts.set(key, (counts.get(key) ?? 0) + 1);
          if (key === 'around') aroundIds.add(f.id);
          if ((fail.get(key) ?? 0) > 0) {
            fail.set(key, fail.get(key) - 1);
            later(() => route.send(JSON.stringify({ type: 'error', re: f.id, code: 'internal', message: 'injected by the test relay', rebuild: false })));
            return;
          }
        }
        up.send(m);
      });
      up.onMessage((m) => {
        let re;
        try {
          re = JSON.parse(m).re;
        } catch {
          /* pass through */
        }
        if (holding && re !== undefined && aroundIds.has(re)) {
          held.push(m);
          return;
        }
        later(() => route.send(m));
      });
    },
    setDelay(ms) {
      delay = ms;
    },
    failNext(anchor) {
      fail.set(anchor, (fail.get(anchor) ?? 0) + 1);
    },
    /** rejectNextSend answers the next send with a rejected receipt carrying code. */
    rejectNextSend(code) {
      reject.push(code);
    },
    count(key) {
      return counts.get(key) ?? 0;
    },
    holdAround(on) {
      holding = on;
      if (!on) {
        const route = routes.at(-1);
        for (const m of held.splice(0)) route?.send(m);
      }
    },
    dropAll() {
      for (const r of routes.splice(0)) void r.close();
    },
    // inject sends a server frame to the page as if the server had.
    inject(frame) {
      routes.at(-1)?.send(JSON.stringify(frame));
    },
  };
}
