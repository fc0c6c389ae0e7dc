/**
 * Headless Chromium (Debian's package, installed by .ci/run) driven by playwright-core, which brings
 * no browser of its own. Tests that need it skip with a message when it is missing, and fail in CI.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.RUNLENS_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
];

export function browserNote(): { missing: boolean; title: (t: string) => string } {
  const missing = !existsSync(CHROMIUM);
  if (missing && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
  if (missing) console.warn(`[runlens tests] SKIPPING browser tests: ${CHROMIUM} not found (apt-get install chromium)`);
  return { missing, title: (t) => (missing ? `${t} (skipped: ${CHROMIUM} not found)` : t) };
}

export interface Browser {
  context: BrowserContext;
  close: () => Promise<void>;
}

/** A fresh profile in a temporary folder, removed on close. */
export async function openBrowser(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'runlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface OpenedReport {
  page: Page;
  /** every request the page made (the file itself included) */
  requests: string[];
  /** uncaught errors and console errors */
  errors: string[];
}

/** Open a report file and wait until its chart is drawn; any request that is not the file is aborted. */
export async function openReport(b: Browser, file: string): Promise<OpenedReport> {
  const page = await b.context.newPage();
  const url = `file://${path.resolve(file)}`;
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort()));
  await page.goto(url);
  await page.waitForSelector('body[data-drawn="true"]', { timeout: 30_000 });
  return { page, requests, errors };
}

/**
 * Share of a PNG's pixels that differ from its most common colour, decoded by the browser itself
 * (the page's types are not this program's: the code is sent as text).
 */
export async function nonBackgroundShare(page: Page, png: Buffer): Promise<number> {
  return (await page.evaluate(`(async () => {
    const img = new Image();
    img.src = 'data:image/png;base64,${png.toString('base64')}';
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, c.width, c.height).data;
    const counts = new Map();
    for (let i = 0; i < px.length; i += 4) {
      const k = (px[i] << 16) | (px[i + 1] << 8) | px[i + 2];
      counts.set(k, (counts.get(k) || 0) + 1);
    }
    return 1 - Math.max(...counts.values()) / (px.length / 4);
  })()`)) as number;
}
