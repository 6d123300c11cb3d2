import type { Page } from 'puppeteer-core';

/**
 * A document of our own that a page keeps between renders (template/page-shell.ts has the layout's): what
 * a render would load, it swaps in. It must never run a script of the page swapped in, since the page next
 * holds another caller's data; a page it cannot swap in safely is refused, and loaded whole instead.
 */
export interface PageShell {
  document: string;
  /** What the swap takes for `html`; undefined when `html` can only be loaded whole. */
  payload(html: string): string | undefined;
  /** An expression that swaps `payload` in and answers the page's height, or -1 when it refuses it. */
  swap(payload: string): string;
}

export interface PngOptions {
  width: number;
  height: number;
}

/** How a render's page reached the browser: swapped into a shell, or loaded as a document of its own. */
export type DrawnBy = 'swapped' | 'loaded';

export interface PageDrawerOptions {
  renderTimeoutMs: number;
  /** Taller pages are cut: a screenshot's memory grows with its height. */
  maxHeight?: number;
  shell?: PageShell;
}

/**
 * Draws a dashboard's HTML in a page of the pool and takes its picture: swapped into the page's shell when
 * the shell takes it, else loaded as a document of its own. Remembers per page what it holds (the shell,
 * the viewport), so that a reused page is not set up again.
 */
export class PageDrawer {
  /** Pages holding the shell: they are reused without a navigation. */
  private readonly shells = new WeakSet<Page>();
  /** The viewport each page was last given, so that an unchanged one is not set again. */
  private readonly viewports = new WeakMap<Page, string>();

  constructor(
    private readonly options: PageDrawerOptions,
    private readonly drawn: (by: DrawnBy) => void = () => undefined,
  ) {}

  /** Whether `page` holds the shell, which a next render swaps its page into without a navigation. */
  holdsShell(page: Page): boolean {
    return this.shells.has(page);
  }

  async draw(page: Page, html: string, size: PngOptions): Promise<Buffer> {
    const viewport = `${size.width}x${size.height}`;
    if (this.viewports.get(page) !== viewport) {
      await page.setViewport({ width: size.width, height: size.height, deviceScaleFactor: 1 });
      this.viewports.set(page, viewport);
    }
    const payload = this.options.shell?.payload(html);
    let content = payload === undefined ? undefined : await this.swap(page, payload);
    if (content === undefined) {
      // A new window first: a document written into the shell would share its window, where the last
      // render's data (its charts) and the shell's policy still are.
      if (this.shells.has(page)) {
        this.shells.delete(page);
        await page.goto('about:blank', { timeout: this.options.renderTimeoutMs });
      }
      content = await this.load(page, html);
      this.drawn('loaded');
    } else {
      this.drawn('swapped');
    }
    const height = Math.max(size.height, Math.min(content, this.options.maxHeight ?? 10_000));
    const png = await page.screenshot({
      type: 'png',
      clip: { x: 0, y: 0, width: size.width, height },
      captureBeyondViewport: true,
      // Not Chromium's faster PNG encoding (optimizeForSpeed): faster, but its larger PNGs break Squirrels
      // Studio v1, which turns a PNG into base64 with String.fromCharCode(...bytes): past about 125,000
      // arguments that throws, and the dashboard stayed blank (test/clients.e2e-spec.ts; the figures:
      // docs/performance.md, "Figures behind the code", "PNG encoding").
    });
    return Buffer.from(png);
  }

  /**
   * Swaps a page into the page's shell (loading the shell first if the page has none): the page's height,
   * or undefined when the shell refused it (and left unchanged what it shows).
   */
  private async swap(page: Page, payload: string): Promise<number | undefined> {
    const shell = this.options.shell!;
    const limit = this.options.renderTimeoutMs;
    if (!this.shells.has(page)) {
      await page.setContent(shell.document, { waitUntil: 'load', timeout: limit });
      this.shells.add(page);
    }
    const height = Number(await page.evaluate(shell.swap(payload)));
    return height >= 0 ? height : undefined;
  }

  /** Loads a page as a document of its own and waits for it to say it is ready: its height. */
  private async load(page: Page, html: string): Promise<number> {
    const limit = this.options.renderTimeoutMs;
    await page.setContent(html, { waitUntil: 'load', timeout: limit });
    await page.waitForFunction('window.__dreyReady === true', { timeout: limit });
    // A string: the function runs in the page, where `document` exists; this file is compiled without DOM types.
    return Number(await page.evaluate('document.documentElement.scrollHeight'));
  }
}
