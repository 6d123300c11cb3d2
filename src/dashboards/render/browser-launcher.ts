import type { Browser } from 'puppeteer-core';
import { DomainError } from '@/core/errors';
import type { JsonLogger } from '@/runtime/json-logger';
import { chromiumMissing, launchChromium } from '@/dashboards/render/chromium';

/** Chromium as the pool last saw it, for readiness. */
export interface BrowserState {
  /** A browser is launched and connected now. */
  running: boolean;
  /** Why the last launch failed, until one succeeds. */
  launchError?: string;
}

export interface BrowserLauncherOptions {
  executablePath: string;
  /** Starts the browser; Debian's Chromium at `executablePath` unless given (the unit tests give a fake). */
  launch?: () => Promise<Browser>;
}

/** What the launcher tells its pool. */
export interface LauncherEvents {
  launched?(): void;
  /** The browser crashed or was killed: the pages it held are gone. */
  gone(browser: Browser): void;
}

interface LaunchedBrowser {
  promise: Promise<Browser>;
  /** Set once launched, so that forget() can tell this browser from a successor synchronously. */
  browser?: Browser;
}

/** The browser went away during a render, which is then tried once more on a new one. */
export class BrowserGoneError extends Error {
  constructor() {
    super('The browser went away during the render');
  }
}

/**
 * One Chromium per process, launched on first use and again if it dies, and what readiness needs to know
 * of it. The pages are the pool's (browser-pool.ts).
 */
export class BrowserLauncher {
  private current?: LaunchedBrowser;
  private launchError?: string;
  private launchCount = 0;
  private closed = false;

  constructor(
    private readonly options: BrowserLauncherOptions,
    private readonly logger: JsonLogger,
    private readonly events: LauncherEvents,
  ) {}

  /** Browsers launched so far. */
  get launches(): number {
    return this.launchCount;
  }

  state(): BrowserState {
    return {
      running: this.current?.browser?.connected === true,
      launchError: this.launchError,
    };
  }

  /** The browser, launched if there is none; a launch that fails is a 503 to retry (or a 503 to install). */
  browser(): Promise<Browser> {
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

  /**
   * Crashed or killed: the next render launches a new browser, if `browser` is still the current one, so
   * that a late event cannot throw away its successor.
   */
  forget(browser: Browser): void {
    if (this.current?.browser === browser) this.current = undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const launched = this.current;
    this.current = undefined;
    const browser = await launched?.promise.catch(() => undefined);
    await browser?.close().catch(() => undefined);
  }

  private async launch(): Promise<Browser> {
    const started = Date.now();
    const browser = await (
      this.options.launch ?? (() => launchChromium(this.options.executablePath))
    )();
    this.launchCount += 1;
    this.launchError = undefined;
    this.events.launched?.();
    this.logger.emit('info', 'chromium launched', {
      ms: Date.now() - started,
      pid: browser.process()?.pid,
      launches: this.launchCount,
    });
    browser.on('disconnected', () => {
      if (!this.closed) this.logger.emit('warn', 'chromium disconnected');
      this.events.gone(browser);
    });
    return browser;
  }
}
