import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Debian's `chromium` package; `.ci/run` installs it when missing. No browser is downloaded. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Starts headless Debian Chromium through Playwright; fails with the fix when it is missing.
 * `args` are added to the command line (`--js-flags=--expose-gc` exposes the collector).
 */
export async function launchChromium(args: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's package (apt-get install -y chromium)`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      ...args,
    ],
  })
}
