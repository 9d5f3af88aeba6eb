// Test helper: Debian's headless Chromium driven by playwright-core, in a fresh profile, closed
// (and its profile removed) at teardown.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';

/** Where `.ci/install-packages.sh` (apt `chromium`) puts the browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** The reason to skip a browser test, or false when Chromium is installed. */
export const noChromium: string | false = !existsSync(CHROMIUM) && `${CHROMIUM} is absent`;

/** A page in a fresh headless Chromium; every dialog it opens is dismissed and recorded in `dialogs`. */
export async function chromiumPage(t: { after(fn: () => Promise<void>): void }): Promise<{ page: Page; dialogs: string[] }> {
  // A fresh profile: playwright passes it to Chromium as --user-data-dir (it refuses the flag in args).
  const profile = mkdtempSync(path.join(tmpdir(), 'swy-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { page, dialogs };
}

/**
 * A page server on 127.0.0.1:0 serving one empty HTML page (`Connection: close`, so that the
 * browser's connections do not hold its close); its origin (`http://127.0.0.1:PORT`). Closed at teardown.
 */
export async function pageServer(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    res.end('<!doctype html><title>browser MCP client</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
