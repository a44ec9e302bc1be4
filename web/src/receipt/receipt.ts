// The turn receipt line, exactly as the terminal prints it (the Go package
// `receipt`): "30.0s · 2 steps · 0 in → 1k out · 100.0 tok/s · $0.01 · 07:28 am".
// receipt.test.ts checks this file against the Go package's output on the
// shared fixtures in receipt/testdata/web-parity.json.

/** One model request of a turn, as the stored `turn-receipt` entry holds it. */
export interface ReceiptStep {
  durationMs: number;
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  cacheReadTokens?: number;
  costUSD?: number;
  tokensPerSecond?: number;
  generationDurationMs?: number;
  timeToFirstTokenMs?: number;
}

/** A stored `turn-receipt` entry's content. */
export interface TurnReceipt {
  steps: ReceiptStep[];
  /** Epoch milliseconds. */
  finishedAt?: number;
}

const SEP = ' · ';

const valid = (v: number) => v >= 0 && v !== Infinity;

/**
 * fixed formats like Go's strconv.FormatFloat(x, 'f', digits): correctly
 * rounded, with exact ties to even (toFixed would round them up).
 */
export function fixed(x: number, digits: number): string {
  const twice = x * 2 ** (digits + 1);
  if (Number.isInteger(twice) && Math.abs(twice % 2) === 1) {
    let n = Math.floor(x * 10 ** digits);
    if (Math.abs(n % 2) === 1) n += 1;
    return (n / 10 ** digits).toFixed(digits);
  }
  return x.toFixed(digits);
}

/** duration: under a minute "%.1fs", otherwise "Xm YYs". */
export function duration(ms: number): string {
  if (!valid(ms)) return '?s';
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const secs = Math.round(ms / 1000);
  const rest = secs % 60;
  const mins = (secs - rest) / 60;
  return `${mins.toFixed(0)}m ${rest < 10 ? '0' : ''}${rest.toFixed(0)}s`;
}

const UNITS: [number, string][] = [
  [1e3, 'k'],
  [1e6, 'M'],
  [1e9, 'B'],
  [1e12, 'T'],
];

/** count: 48000 → "48k", 1500 → "1.5k", 315 → "315". */
export function count(n: number): string {
  if (n > -1000 && n < 1000) return String(n);
  let f = n;
  let sign = '';
  if (f < 0) {
    sign = '-';
    f = -f;
  }
  for (let i = 0; i < UNITS.length; i++) {
    const [size, suffix] = UNITS[i]!;
    const v = f / size;
    const tenths = Math.round(v * 10);
    if (tenths < 100) {
      let s = (tenths / 10).toFixed(1);
      if (s.endsWith('0')) s = s.slice(0, -2);
      return sign + s + suffix;
    }
    const whole = Math.round(v);
    if (whole < 1000 || i === UNITS.length - 1) return sign + whole.toFixed(0) + suffix;
  }
  return sign + String(f);
}

/** cost: "$0.00", "<$0.0001", "$0.0042", "$1.27". */
export function cost(usd: number): string {
  if (!valid(usd)) return '$?';
  if (usd === 0) return '$0.00';
  if (usd < 0.0001) return '<$0.0001';
  return Math.round(usd * 1e4) < 100 ? `$${fixed(usd, 4)}` : `$${fixed(usd, 2)}`;
}

/** clock: a 12-hour time with a zero-padded hour, "07:28 am", in local time (or UTC). */
export function clock(epochMs: number, utc = false): string {
  const d = new Date(epochMs);
  const h = utc ? d.getUTCHours() : d.getHours();
  const m = utc ? d.getUTCMinutes() : d.getMinutes();
  const pad = (v: number) => String(v).padStart(2, '0');
  return `${pad(h % 12 || 12)}:${pad(m)} ${h < 12 ? 'am' : 'pm'}`;
}

interface Totals {
  steps: number;
  durationMs: number;
  prompt: number;
  completion: number;
  cacheRead: number;
  total: number;
  hasSplit: boolean;
  hasTotalOnly: boolean;
  hasCache: boolean;
  hasCost: boolean;
  costUSD: number;
  generationMs: number;
  untimed: boolean;
}

function sum(steps: readonly ReceiptStep[]): Totals {
  const t: Totals = {
    steps: 0,
    durationMs: 0,
    prompt: 0,
    completion: 0,
    cacheRead: 0,
    total: 0,
    hasSplit: false,
    hasTotalOnly: false,
    hasCache: false,
    hasCost: false,
    costUSD: 0,
    generationMs: 0,
    untimed: false,
  };
  for (const s of steps) {
    t.steps++;
    t.durationMs += s.durationMs;
    const prompt = s.promptTokens ?? 0;
    const completion = s.completionTokens ?? 0;
    const split = s.promptTokens !== undefined || s.completionTokens !== undefined;
    t.prompt += prompt;
    t.completion += completion;
    if (s.totalTokens !== undefined) {
      t.total += s.totalTokens;
      t.hasTotalOnly ||= !split;
    } else t.total += prompt + completion;
    t.hasSplit ||= split;
    if (s.cacheReadTokens !== undefined) {
      t.cacheRead += s.cacheReadTokens;
      t.hasCache = true;
    }
    if (s.costUSD !== undefined) {
      t.costUSD += s.costUSD;
      t.hasCost = true;
    }
    if (s.completionTokens === undefined) t.untimed = true;
    else if (completion > 0) {
      const g = s.generationDurationMs;
      const r = s.tokensPerSecond;
      if (g !== undefined && g > 0 && valid(g)) t.generationMs += g;
      else if (r !== undefined && r > 0 && valid(r)) t.generationMs += (completion / r) * 1000;
      else t.untimed = true;
    }
  }
  return t;
}

function rate(t: Totals): string {
  if (t.untimed || t.completion <= 0 || !(t.generationMs > 0)) return '';
  const r = t.completion / (t.generationMs / 1000);
  return Number.isFinite(r) ? `${SEP}${fixed(r, 1)} tok/s` : '';
}

function usage(t: Totals): string {
  if (t.hasSplit && !t.hasTotalOnly) return `${SEP}${count(t.prompt)} in → ${count(t.completion)} out`;
  if (t.hasSplit || t.hasTotalOnly) return `${SEP}${count(t.total)} tok`;
  return '';
}

/**
 * receiptLine is the terminal's closing line of a turn. Parts whose facts are
 * missing are left out, never estimated. utc formats the finish time in UTC
 * (for tests); otherwise it is the browser's local time.
 */
export function receiptLine(r: TurnReceipt, utc = false): string {
  const t = sum(r.steps);
  let out = duration(t.durationMs);
  if (t.steps > 1) out += `${SEP}${t.steps} steps`;
  out += usage(t);
  out += rate(t);
  if (t.hasCost) out += SEP + cost(t.costUSD);
  if (r.finishedAt !== undefined) out += SEP + clock(r.finishedAt, utc);
  return out;
}
