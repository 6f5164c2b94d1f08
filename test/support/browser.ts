import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';

/** Debian's chromium, which `.ci/run` installs. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots are test artefacts, kept out of git (.gitignore). */
export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'web');

/**
 * `describe` for browser suites: skipped with a message when chromium is missing on a developer's
 * machine; in CI (`CI` set) a missing chromium fails the suite instead of hiding it.
 */
export const describeInBrowser: jest.Describe = (() => {
  if (existsSync(CHROMIUM) || process.env.CI) return describe;
  process.stderr.write(`browser suites skipped: no chromium at ${CHROMIUM} (apt-get install chromium)\n`);
  return describe.skip;
})();

/** Headless chromium through puppeteer-core, with no sandbox (tests run as root in containers). */
export async function launchBrowser(): Promise<Browser> {
  const puppeteer = (await import('puppeteer-core')).default;
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** A page that records every dialog (alert, confirm) and console error, to assert that none came. */
export async function watchedPage(
  browser: Browser,
  width = 1280,
): Promise<{
  page: Page;
  dialogs: string[];
  errors: string[];
}> {
  const page = await browser.newPage();
  await page.setViewport({ width, height: width < 600 ? 740 : 900 });
  const dialogs: string[] = [];
  const errors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, dialogs, errors };
}

/**
 * Saves a screenshot under test-artifacts/web/<name>.png: the full page, or (`fullPage: false`) the
 * window only, for a page whose transitions a full-page capture's resize would catch half-way.
 */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) as `${string}.png`, fullPage });
}
