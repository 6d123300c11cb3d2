import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { DomainError } from '@/common/errors';
import type { JsonLogger } from '@/common/json-logger';

export interface BrowserPoolOptions {
  executablePath: string;
  /** Pages kept open and reused; at most this many renders run at once. */
  maxPages: number;
  /** Renders waiting beyond this many are refused with 503 instead of piling up in memory. */
  maxQueued: number;
  renderTimeoutMs: number;
}

export interface PngOptions {
  width: number;
  height: number;
}

export interface PoolStats {
  pagesOpen: number;
  pagesBusy: number;
  queued: number;
  launches: number;
}

// Chromium must reach nothing: these flags keep it from calling home, and the request filter below refuses
// every request of the page except the inline document and data: URLs.
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
];

/**
 * One Chromium per process, launched on first use and again if it dies; a bounded set of pages reused
 * between renders; a queue in front of them; a time limit per render.
 */
export class BrowserPool {
  private browser?: Promise<Browser>;
  private readonly idle: Page[] = [];
  private readonly busy = new Set<Page>();
  private readonly waiting: ((page: Page | Error) => void)[] = [];
  private launches = 0;
  private closed = false;

  constructor(
    private readonly options: BrowserPoolOptions,
    private readonly logger: JsonLogger,
  ) {}

  stats(): PoolStats {
    return {
      pagesOpen: this.idle.length + this.busy.size,
      pagesBusy: this.busy.size,
      queued: this.waiting.length,
      launches: this.launches,
    };
  }

  /**
   * Renders a self-contained HTML document to PNG; the document signals readiness with `window.__dreyReady`.
   * A render that fails because Chromium died is tried once more on a new browser: a crash costs one slow
   * request, not an error.
   */
  async renderPng(html: string, size: PngOptions): Promise<Buffer> {
    try {
      return await this.renderOnce(html, size);
    } catch (error) {
      if (!(error instanceof BrowserGoneError)) throw error;
      this.logger.emit('warn', 'render retried after the browser went away');
      return this.renderOnce(html, size);
    }
  }

  private async renderOnce(html: string, size: PngOptions): Promise<Buffer> {
    const page = await this.acquire();
    let healthy = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const render = async () => {
        await page.setViewport({ width: size.width, height: size.height, deviceScaleFactor: 1 });
        await page.setContent(html, { waitUntil: 'load', timeout: this.options.renderTimeoutMs });
        await page.waitForFunction('window.__dreyReady === true', {
          timeout: this.options.renderTimeoutMs,
        });
        return Buffer.from(await page.screenshot({ type: 'png', fullPage: true }));
      };
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new DomainError('query_timeout', 'The dashboard took too long to render')),
          this.options.renderTimeoutMs,
        );
      });
      return await Promise.race([render(), timeout]);
    } catch (error) {
      healthy = false;
      if (error instanceof DomainError) throw error;
      if (!page.browser().connected || page.isClosed()) {
        this.browser = undefined;
        throw new BrowserGoneError();
      }
      this.logger.emit('warn', 'render failed', {
        error: error instanceof Error ? error.message : String(error),
      });
      throw new DomainError('internal_error', 'The dashboard could not be rendered');
    } finally {
      clearTimeout(timer);
      await this.release(page, healthy);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0))
      waiter(new DomainError('not_ready', 'Shutting down'));
    const browser = await this.browser?.catch(() => undefined);
    this.browser = undefined;
    await browser?.close().catch(() => undefined);
  }

  private async acquire(): Promise<Page> {
    if (this.closed) throw new DomainError('not_ready', 'Shutting down');
    const idle = this.idle.pop();
    if (idle && !idle.isClosed()) {
      this.busy.add(idle);
      return idle;
    }
    if (this.busy.size < this.options.maxPages) {
      // Reserve the slot before the (slow) page creation so concurrent callers count it.
      const placeholder = {} as Page;
      this.busy.add(placeholder);
      try {
        const page = await this.newPage();
        this.busy.delete(placeholder);
        this.busy.add(page);
        return page;
      } catch (error) {
        this.busy.delete(placeholder);
        this.wakeNext();
        throw error;
      }
    }
    if (this.waiting.length >= this.options.maxQueued) {
      throw new DomainError(
        'not_ready',
        'Too many dashboards are being rendered; try again shortly',
        2,
      );
    }
    const next = await new Promise<Page | Error>((resolve) => this.waiting.push(resolve));
    if (next instanceof Error) throw next;
    return next;
  }

  private async release(page: Page, healthy: boolean): Promise<void> {
    this.busy.delete(page);
    if (!healthy || page.isClosed() || this.closed) {
      await page.close().catch(() => undefined);
      this.wakeNext();
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter) {
      this.busy.add(page);
      waiter(page);
    } else {
      this.idle.push(page);
    }
  }

  /** A slot freed without a page to hand over: the next waiter opens its own. */
  private wakeNext(): void {
    const waiter = this.waiting.shift();
    if (!waiter) return;
    this.acquire().then(waiter, (error: Error) => waiter(error));
  }

  private async newPage(): Promise<Page> {
    let browser = await this.launch();
    if (!browser.connected) {
      this.browser = undefined;
      browser = await this.launch();
    }
    const page = await browser.newPage();
    await page.setJavaScriptEnabled(true);
    await page.setRequestInterception(true);
    page.on('request', (request: HTTPRequest) => {
      const url = request.url();
      if (url.startsWith('data:') || url === 'about:blank') void request.continue();
      else {
        this.logger.emit('warn', 'dashboard request refused', { url: url.slice(0, 200) });
        void request.abort('blockedbyclient');
      }
    });
    return page;
  }

  private launch(): Promise<Browser> {
    this.browser ??= (async () => {
      const { launch } = await import('puppeteer-core');
      const started = Date.now();
      const browser = await launch({
        executablePath: this.options.executablePath,
        args: CHROMIUM_ARGS,
        headless: true,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      this.launches += 1;
      this.logger.emit('info', 'chromium launched', {
        ms: Date.now() - started,
        launches: this.launches,
      });
      browser.on('disconnected', () => {
        // Crashed or killed: forget it and its pages; the next render launches a new one.
        this.logger.emit('warn', 'chromium disconnected');
        this.browser = undefined;
        this.idle.splice(0);
      });
      return browser;
    })();
    this.browser.catch(() => (this.browser = undefined));
    return this.browser.catch((error: unknown) => {
      this.logger.emit('error', 'chromium could not start', {
        error: error instanceof Error ? error.message : String(error),
      });
      throw new DomainError('not_ready', 'The renderer is not available; try again shortly', 5);
    });
  }
}

class BrowserGoneError extends Error {
  constructor() {
    super('The browser went away during the render');
  }
}
