import type { Browser, Page } from 'puppeteer-core';
import { DomainError } from '@/core/errors';
import type { JsonLogger } from '@/runtime/json-logger';
import { closeSoon, openRenderPage } from '@/dashboards/render/chromium';
import {
  BrowserGoneError,
  BrowserLauncher,
  BrowserState,
} from '@/dashboards/render/browser-launcher';
import { DrawnBy, PageDrawer, PageShell, PngOptions } from '@/dashboards/render/page-drawer';

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

export interface PoolStats {
  /** Pages open, being opened or being closed: never above `maxPages`. */
  pagesOpen: number;
  pagesBusy: number;
  queued: number;
  /** The most pages ever open at once. */
  peakPagesOpen: number;
  launches: number;
}

export type RenderOutcome = 'ok' | 'retried' | 'timeout' | 'refused' | 'error';

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

/**
 * One Chromium per process, launched on first use and again if it dies (browser-launcher.ts); a bounded
 * set of pages reused between renders, drawn in by page-drawer.ts; a bounded queue in front of them; a
 * time limit per render.
 *
 * Invariant: `slots` counts pages open, being opened or being closed, and never exceeds `maxPages`. A slot
 * freed while renders wait goes to the first of them (as a page to reuse or a slot to open one in), so
 * waiters are served in order and a newcomer cannot overtake them.
 */
export class BrowserPool {
  private readonly launcher: BrowserLauncher;
  private readonly drawer: PageDrawer;
  private readonly idle: Page[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly renders = new WeakMap<Page, number>();
  private slots = 0;
  private busy = 0;
  private peak = 0;
  private closed = false;

  constructor(
    private readonly options: BrowserPoolOptions,
    private readonly logger: JsonLogger,
    private readonly events: PoolEvents = {},
  ) {
    this.launcher = new BrowserLauncher(options, logger, {
      launched: () => events.launched?.(),
      gone: (browser) => this.forget(browser),
    });
    this.drawer = new PageDrawer(options, (by) => events.drawn?.(by));
  }

  stats(): PoolStats {
    return {
      pagesOpen: this.slots,
      pagesBusy: this.busy,
      queued: this.waiting.length,
      peakPagesOpen: this.peak,
      launches: this.launcher.launches,
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
    return this.launcher.state();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) {
      waiter.reject(new DomainError('not_ready', 'The service is shutting down', 5));
    }
    await this.launcher.close();
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
      const png = await Promise.race([this.drawer.draw(page, html, size), timeout]);
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
    if (keep && !this.drawer.holdsShell(page)) {
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
    let browser = await this.launcher.browser();
    if (!browser.connected) {
      this.forget(browser);
      browser = await this.launcher.browser();
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

  /**
   * Crashed or killed: the next render launches a new browser (see {@link BrowserLauncher.forget}), and
   * this browser's idle pages are dropped.
   */
  private forget(browser: Browser): void {
    this.launcher.forget(browser);
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (this.idle[i].browser() === browser) {
        this.idle.splice(i, 1);
        this.freeSlot();
      }
    }
  }
}
