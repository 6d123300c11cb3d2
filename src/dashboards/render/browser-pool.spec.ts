import { EventEmitter } from 'node:events';
import type { Browser } from 'puppeteer-core';
import { DomainError } from '@/core/errors';
import { JsonLogger } from '@/runtime/json-logger';
import { BrowserPool, BrowserPoolOptions } from '@/dashboards/render/browser-pool';
import type { PageShell } from '@/dashboards/render/page-drawer';

/**
 * The pool's bookkeeping against a fake Chromium (puppeteer-core is an ES module Jest cannot load here; the
 * real browser is exercised end to end in test/dashboards-rendering.e2e-spec.ts). A fake page "renders" by
 * waiting until the test releases it, so the tests decide the order of events.
 */
class FakeBrowser extends EventEmitter {
  connected = true;
  readonly pages: FakePage[] = [];
  async newPage(): Promise<FakePage> {
    if (!this.connected) throw new Error('Target closed');
    const page = new FakePage(this);
    this.pages.push(page);
    return Promise.resolve(page);
  }
  process() {
    return null;
  }
  close(): Promise<void> {
    this.connected = false;
    return Promise.resolve();
  }
  crash(): void {
    this.connected = false;
    this.emit('disconnected');
  }
}

class FakePage extends EventEmitter {
  closed = false;
  /** What the pool asked of the page, in order: `goto <url>`, `setContent <html>`, `swap <payload>`. */
  readonly calls: string[] = [];
  private finish?: () => void;
  constructor(private readonly owner: FakeBrowser) {
    super();
  }
  browser() {
    return this.owner;
  }
  isClosed() {
    return this.closed;
  }
  setRequestInterception = () => Promise.resolve();
  setViewport = () => Promise.resolve();
  goto = (url: string) => {
    this.calls.push(`goto ${url}`);
    return this.alive();
  };
  /** A shell's swap (see SHELL) answers a height, or -1 for a payload holding "refuse". */
  evaluate = (expression: string) => {
    if (!expression.startsWith('swap:')) return Promise.resolve(900);
    this.calls.push(`swap ${expression.slice(5)}`);
    return Promise.resolve(expression.includes('refuse') ? -1 : 900);
  };
  waitForFunction = () => this.alive();
  screenshot = () => this.alive().then(() => new Uint8Array([1, 2, 3]));
  close = () => {
    this.closed = true;
    return Promise.resolve();
  };
  /** setContent waits for the test to call done(), unless the browser dies first. */
  setContent = (html: string) =>
    new Promise<void>((resolve, reject) => {
      this.calls.push(`setContent ${html}`);
      if (!this.owner.connected) return reject(new Error('Target closed'));
      this.finish = resolve;
      this.owner.once('disconnected', () => reject(new Error('Target closed')));
    });
  done(): void {
    this.finish?.();
    this.finish = undefined;
  }
  get rendering(): boolean {
    return this.finish !== undefined;
  }
  private alive(): Promise<void> {
    return this.owner.connected ? Promise.resolve() : Promise.reject(new Error('Target closed'));
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await tick();
}

function poolWith(options: Partial<BrowserPoolOptions> = {}) {
  const browsers: FakeBrowser[] = [];
  const lines: string[] = [];
  const logger = new JsonLogger('debug', (line) => lines.push(line));
  const pool = new BrowserPool(
    {
      executablePath: '/none',
      maxPages: 2,
      maxQueued: 2,
      renderTimeoutMs: 1000,
      launch: () => {
        const browser = new FakeBrowser();
        browsers.push(browser);
        return Promise.resolve(browser as unknown as Browser);
      },
      ...options,
    },
    logger,
  );
  const rendering = () => browsers.flatMap((b) => b.pages).filter((p) => p.rendering && !p.closed);
  const render = () => pool.renderPng('<p>x</p>', { width: 100, height: 100 });
  /** Renders `html` to the end, letting each page load finish. */
  const draw = async (html: string) => {
    const result = pool.renderPng(html, { width: 100, height: 100 });
    for (let i = 0; i < 5; i++) {
      await settle();
      rendering().forEach((page) => page.done());
    }
    await expect(result).resolves.toBeInstanceOf(Buffer);
    await settle();
  };
  return { pool, browsers, lines, rendering, render, draw };
}

/** A shell that takes pages starting `<layout>`; the fake page refuses those holding "refuse". */
const SHELL: PageShell = {
  document: '<shell>',
  payload: (html) => (html.startsWith('<layout>') ? html.slice('<layout>'.length) : undefined),
  swap: (payload) => `swap:${payload}`,
};

describe('BrowserPool', () => {
  it('renders at most maxPages at once, queues the rest in order, refuses beyond the queue', async () => {
    const { pool, browsers, rendering, render } = poolWith();
    const order: number[] = [];
    const renders = [1, 2, 3, 4].map((n) => render().then(() => order.push(n)));
    await settle();
    expect(browsers).toHaveLength(1);
    expect(rendering()).toHaveLength(2);
    expect(pool.stats()).toMatchObject({ pagesOpen: 2, pagesBusy: 2, queued: 2 });
    await expect(render()).rejects.toMatchObject({ code: 'not_ready', retryAfterSeconds: 2 });

    for (let round = 0; round < 3 && rendering().length > 0; round++) {
      rendering().forEach((page) => page.done());
      await settle();
    }
    await Promise.all(renders);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(pool.stats()).toMatchObject({ pagesOpen: 2, pagesBusy: 0, queued: 0, peakPagesOpen: 2 });
    expect(browsers[0].pages).toHaveLength(2);
  });

  it('relaunches a browser that died between renders; its idle pages are forgotten', async () => {
    const { pool, browsers, rendering, render } = poolWith();
    const first = render();
    await settle();
    rendering()[0].done();
    await first;
    await settle();
    browsers[0].crash();
    expect(pool.stats().pagesOpen).toBe(0);
    const second = render();
    await settle();
    rendering()[0].done();
    await expect(second).resolves.toBeInstanceOf(Buffer);
    expect(browsers).toHaveLength(2);
    expect(pool.stats().launches).toBe(2);
  });

  it('retries once on a new browser when the browser dies during a render', async () => {
    const { browsers, rendering, render, lines } = poolWith();
    const result = render();
    await settle();
    browsers[0].crash();
    await settle();
    expect(browsers).toHaveLength(2);
    rendering()[0].done();
    await expect(result).resolves.toBeInstanceOf(Buffer);
    expect(lines.some((line) => line.includes('render retried after the browser went away'))).toBe(
      true,
    );
  });

  it('a late disconnect of an old browser does not throw away its successor', async () => {
    const { pool, browsers, rendering, render } = poolWith();
    const first = render();
    await settle();
    browsers[0].crash();
    await settle();
    rendering()[0].done();
    await first;
    await settle();
    browsers[0].emit('disconnected');
    expect(pool.stats().pagesOpen).toBe(1);
    const next = render();
    await settle();
    rendering()[0].done();
    await next;
    expect(browsers).toHaveLength(2);
  });

  it('fails a render over its time limit with query_timeout and replaces the page', async () => {
    const { pool, browsers, render, rendering } = poolWith({ renderTimeoutMs: 30 });
    await expect(render()).rejects.toEqual(
      new DomainError('query_timeout', 'The dashboard took longer than 30 ms to render'),
    );
    await settle();
    expect(browsers[0].pages[0].closed).toBe(true);
    expect(pool.stats().pagesOpen).toBe(0);
    const next = render();
    await settle();
    rendering()[0].done();
    await expect(next).resolves.toBeInstanceOf(Buffer);
  });

  it('keeps a shell in its page: loaded once, then swapped into, never navigated away', async () => {
    const { browsers, draw } = poolWith({ maxPages: 1, shell: SHELL });
    await draw('<layout>one');
    await draw('<layout>two');
    expect(browsers[0].pages).toHaveLength(1);
    expect(browsers[0].pages[0].calls).toEqual(['setContent <shell>', 'swap one', 'swap two']);
  });

  it('loads a page the shell refuses, or one not of the layout, in a new window first', async () => {
    const { browsers, draw } = poolWith({ maxPages: 1, shell: SHELL });
    await draw('<layout>one');
    await draw('<layout>refuse');
    await draw('<layout>two');
    await draw('<own>');
    expect(browsers[0].pages[0].calls).toEqual([
      'setContent <shell>',
      'swap one',
      'swap refuse',
      'goto about:blank',
      'setContent <layout>refuse',
      // Wiped after the render, as any page loaded whole.
      'goto about:blank',
      'setContent <shell>',
      'swap two',
      'goto about:blank',
      'setContent <own>',
      'goto about:blank',
    ]);
  });

  it('answers not_ready when Chromium cannot start, and to waiters when it shuts down', async () => {
    const broken = poolWith({ launch: () => Promise.reject(new Error('no such file')) });
    await expect(broken.render()).rejects.toMatchObject({ code: 'not_ready' });
    expect(broken.pool.stats().pagesOpen).toBe(0);

    const { pool, render } = poolWith({ maxPages: 1, renderTimeoutMs: 50 });
    const running = render().catch(() => 'ended');
    const waiting = render();
    await settle();
    const refused = expect(waiting).rejects.toMatchObject({ code: 'not_ready' });
    await pool.close();
    await refused;
    await expect(render()).rejects.toMatchObject({ code: 'not_ready' });
    await expect(running).resolves.toBe('ended');
  });
});
