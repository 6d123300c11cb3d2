import type { Browser, Page } from 'puppeteer-core';
import { DomainError } from '@/core/errors';
import type { JsonLogger } from '@/runtime/json-logger';
import {
  chromiumMissing,
  closeSoon,
  launchChromium,
  openRenderPage,
} from '@/dashboards/render/chromium';

export interface BrowserPoolOptions {
  executablePath: string;
  /** Pages kept open and reused; at most this many renders run at once. */
  maxPages: number;
  /** Renders waiting beyond this many are refused with 503 instead of piling up in memory. */
  maxQueued: number;
  renderTimeoutMs: number;
  /** A page is replaced after this many renders, so that whatever a renderer leaks stays bounded. */
  rendersPerPage?: number;
  /** Taller pages are cut: a screenshot's memory grows with its height. */
  maxHeight?: number;
  /** Starts the browser; Debian's Chromium at `executablePath` unless given (the unit tests give a fake). */
  launch?: () => Promise<Browser>;
  /** A document kept in a page, into which renders swap their pages instead of loading them whole. */
  shell?: PageShell;
}

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

export interface PoolStats {
  /** Pages open, being opened or being closed: never above `maxPages`. */
  pagesOpen: number;
  pagesBusy: number;
  queued: number;
  /** The most pages ever open at once. */
  peakPagesOpen: number;
  launches: number;
}

/** Chromium as the pool last saw it, for readiness. */
export interface BrowserState {
  /** A browser is launched and connected now. */
  running: boolean;
  /** Why the last launch failed, until one succeeds. */
  launchError?: string;
}

export type RenderOutcome = 'ok' | 'retried' | 'timeout' | 'refused' | 'error';

/** How a render's page reached the browser: swapped into a shell, or loaded as a document of its own. */
export type DrawnBy = 'swapped' | 'loaded';

/** What the pool reports as it works, for metrics. */
export interface PoolEvents {
  rendered?(outcome: RenderOutcome, seconds: number): void;
  launched?(): void;
  drawn?(by: DrawnBy): void;
}

type Handoff = Page | 'slot';
interface Waiter {
  resolve(handoff: Handoff): void;
  reject(error: Error): void;
}

interface LaunchedBrowser {
  promise: Promise<Browser>;
  /** Set once launched, so that forget() can tell this browser from a successor synchronously. */
  browser?: Browser;
}

/**
 * One Chromium per process, launched on first use and again if it dies; a bounded set of pages reused
 * between renders; a bounded queue in front of them; a time limit per render.
 *
 * Invariant: `slots` counts pages open, being opened or being closed, and never exceeds `maxPages`. A slot
 * freed while renders wait goes to the first of them (as a page to reuse or a slot to open one in), so
 * waiters are served in order and a newcomer cannot overtake them.
 */
export class BrowserPool {
  private current?: LaunchedBrowser;
  private readonly idle: Page[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly renders = new WeakMap<Page, number>();
  /** Pages holding the shell: they are reused without a navigation. */
  private readonly shells = new WeakSet<Page>();
  /** The viewport each page was last given, so that an unchanged one is not set again. */
  private readonly viewports = new WeakMap<Page, string>();
  private slots = 0;
  private busy = 0;
  private peak = 0;
  private launches = 0;
  private launchError?: string;
  private closed = false;

  constructor(
    private readonly options: BrowserPoolOptions,
    private readonly logger: JsonLogger,
    private readonly events: PoolEvents = {},
  ) {}

  stats(): PoolStats {
    return {
      pagesOpen: this.slots,
      pagesBusy: this.busy,
      queued: this.waiting.length,
      peakPagesOpen: this.peak,
      launches: this.launches,
    };
  }

  /**
   * Renders a self-contained HTML document to PNG; the document signals readiness with `window.__dreyReady`.
   * A render that fails because Chromium died is tried once more on a new browser: a crash costs one slow
   * request, not an error.
   */
  async renderPng(html: string, size: PngOptions): Promise<Buffer> {
    const started = Date.now();
    let outcome: RenderOutcome = 'error';
    try {
      try {
        const png = await this.renderOnce(html, size);
        outcome = 'ok';
        return png;
      } catch (error) {
        if (!(error instanceof BrowserGoneError)) throw error;
        this.logger.emit('warn', 'render retried after the browser went away');
        const png = await this.renderOnce(html, size);
        outcome = 'retried';
        return png;
      }
    } catch (error) {
      if (error instanceof DomainError) {
        if (error.code === 'query_timeout') outcome = 'timeout';
        else if (error.code === 'not_ready') outcome = 'refused';
      }
      if (error instanceof BrowserGoneError) {
        throw new DomainError('not_ready', 'The renderer is restarting; try again shortly', 2);
      }
      throw error;
    } finally {
      this.events.rendered?.(outcome, (Date.now() - started) / 1000);
    }
  }

  browserState(): BrowserState {
    return {
      running: this.current?.browser?.connected === true,
      launchError: this.launchError,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) {
      waiter.reject(new DomainError('not_ready', 'The service is shutting down', 5));
    }
    const launched = this.current;
    this.current = undefined;
    const browser = await launched?.promise.catch(() => undefined);
    await browser?.close().catch(() => undefined);
  }

  private async renderOnce(html: string, size: PngOptions): Promise<Buffer> {
    const page = await this.acquire();
    let timer: NodeJS.Timeout | undefined;
    let reusable = false;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new DomainError(
                'query_timeout',
                `The dashboard took longer than ${this.options.renderTimeoutMs} ms to render`,
              ),
            ),
          this.options.renderTimeoutMs,
        );
      });
      const png = await Promise.race([this.draw(page, html, size), timeout]);
      reusable = true;
      return png;
    } catch (error) {
      if (error instanceof DomainError) throw error;
      if (!page.browser().connected || page.isClosed()) {
        this.forget(page.browser());
        throw new BrowserGoneError();
      }
      this.logger.emit('warn', 'render failed', {
        error: error instanceof Error ? error.message : String(error),
      });
      throw new DomainError('internal_error', 'The dashboard could not be rendered');
    } finally {
      clearTimeout(timer);
      // Not awaited: the response does not wait for the page to be wiped for the next render.
      void this.release(page, reusable);
    }
  }

  private async draw(page: Page, html: string, size: PngOptions): Promise<Buffer> {
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
      this.events.drawn?.('loaded');
    } else {
      this.events.drawn?.('swapped');
    }
    const height = Math.max(size.height, Math.min(content, this.options.maxHeight ?? 10_000));
    const png = await page.screenshot({
      type: 'png',
      clip: { x: 0, y: 0, width: size.width, height },
      captureBeyondViewport: true,
      // Not Chromium's faster PNG encoding (optimizeForSpeed): it saved 50-60 ms of a warm render (screenshot
      // 108-130 ms instead of 172-180 ms) but made the example's PNG 136 KB instead of 100 KB, and Squirrels
      // Studio v1 turns a PNG into base64 with String.fromCharCode(...bytes): past about 125,000 arguments
      // that throws, and the dashboard stayed blank (test/clients.e2e-spec.ts).
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

  private async acquire(): Promise<Page> {
    if (this.closed) throw new DomainError('not_ready', 'The service is shutting down', 5);
    if (this.waiting.length === 0) {
      const page = this.takeIdle();
      if (page) {
        this.busy += 1;
        return page;
      }
      if (this.slots < this.options.maxPages) {
        this.takeSlot();
        this.busy += 1;
        return this.openInSlot();
      }
    }
    if (this.waiting.length >= this.options.maxQueued) {
      throw new DomainError(
        'not_ready',
        'Too many dashboards are being rendered; try again shortly',
        2,
      );
    }
    const handoff = await new Promise<Handoff>((resolve, reject) =>
      this.waiting.push({ resolve, reject }),
    );
    this.busy += 1;
    return handoff === 'slot' ? this.openInSlot() : handoff;
  }

  /**
   * A used page goes back: a shell as it is (the next swap replaces all it shows, and nothing of a page runs
   * in it), any other page after its document is wiped (timers, memory, the previous policy); else closed.
   */
  private async release(page: Page, reusable: boolean): Promise<void> {
    this.busy -= 1;
    const uses = (this.renders.get(page) ?? 0) + 1;
    this.renders.set(page, uses);
    let keep = reusable && !this.closed && uses < (this.options.rendersPerPage ?? 200);
    if (keep && !this.shells.has(page)) {
      keep = await page
        .goto('about:blank', { timeout: 5000 })
        .then(() => page.browser().connected && !page.isClosed())
        .catch(() => false);
    }
    if (!keep) {
      await closeSoon(page);
      this.freeSlot();
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter.resolve(page);
    else this.idle.push(page);
  }

  private takeIdle(): Page | undefined {
    for (let page = this.idle.pop(); page; page = this.idle.pop()) {
      if (!page.isClosed() && page.browser().connected) return page;
      this.freeSlot();
    }
    return undefined;
  }

  private takeSlot(): void {
    this.slots += 1;
    this.peak = Math.max(this.peak, this.slots);
  }

  /** A page is gone: its slot goes to the first waiter, who opens a page in it. */
  private freeSlot(): void {
    this.slots -= 1;
    const waiter = this.waiting.shift();
    if (!waiter) return;
    this.takeSlot();
    waiter.resolve('slot');
  }

  private async openInSlot(): Promise<Page> {
    try {
      return await this.openPage();
    } catch (error) {
      this.busy -= 1;
      this.freeSlot();
      throw error;
    }
  }

  private async openPage(): Promise<Page> {
    let browser = await this.browser();
    if (!browser.connected) {
      this.forget(browser);
      browser = await this.browser();
    }
    try {
      const page = await openRenderPage(browser, this.logger);
      this.logger.emit('info', 'render page opened', {
        pagesOpen: this.slots,
        maxPages: this.options.maxPages,
      });
      return page;
    } catch (error) {
      // Chromium died between launch and page: the caller's render retries on a new one.
      if (!browser.connected) {
        this.forget(browser);
        throw new BrowserGoneError();
      }
      throw error;
    }
  }

  private browser(): Promise<Browser> {
    // Retrying cannot help here: the answer says what to install, with no Retry-After.
    const missing = this.options.launch ? undefined : chromiumMissing(this.options.executablePath);
    if (missing) return Promise.reject(new DomainError('renderer_unavailable', missing));
    if (!this.current) {
      const launched: LaunchedBrowser = { promise: this.launch() };
      this.current = launched;
      launched.promise.then(
        (browser) => (launched.browser = browser),
        () => {
          if (this.current === launched) this.current = undefined;
        },
      );
    }
    return this.current.promise.catch((error: unknown) => {
      this.launchError = error instanceof Error ? error.message : String(error);
      this.logger.emit('error', 'chromium could not start', { error: this.launchError });
      throw new DomainError('not_ready', 'The renderer is not available; try again shortly', 5);
    });
  }

  private async launch(): Promise<Browser> {
    const started = Date.now();
    const browser = await (
      this.options.launch ?? (() => launchChromium(this.options.executablePath))
    )();
    this.launches += 1;
    this.launchError = undefined;
    this.events.launched?.();
    this.logger.emit('info', 'chromium launched', {
      ms: Date.now() - started,
      pid: browser.process()?.pid,
      launches: this.launches,
    });
    browser.on('disconnected', () => {
      if (!this.closed) this.logger.emit('warn', 'chromium disconnected');
      this.forget(browser);
    });
    return browser;
  }

  /**
   * Crashed or killed: the next render launches a new browser. Only this browser's idle pages are dropped,
   * and only if it is still the current one, so a late event cannot throw away its successor.
   */
  private forget(browser: Browser): void {
    if (this.current?.browser === browser) this.current = undefined;
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (this.idle[i].browser() === browser) {
        this.idle.splice(i, 1);
        this.freeSlot();
      }
    }
  }
}

class BrowserGoneError extends Error {
  constructor() {
    super('The browser went away during the render');
  }
}
