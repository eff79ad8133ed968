// playwright-core enters here: Debian's chromium (never a downloaded browser), headless, quiet,
// for the browser tests, the dashboard bench and the screenshots.
import { chromium, type Browser } from 'playwright-core';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: ARGS });
}
