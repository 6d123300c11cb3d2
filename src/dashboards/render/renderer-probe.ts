import { execFile } from 'node:child_process';
import type { BrowserPool } from '@/dashboards/render/browser-pool';
import { chromiumMissing, loadPuppeteer } from '@/dashboards/render/chromium';

/** Whether PNG dashboards can be rendered by this process, and why not. */
export interface RendererState {
  /** true: they can; false: they cannot; undefined: not known yet (the check at start is running). */
  works: boolean | undefined;
  detail: string;
}

/** `chromium --version` takes about 0.3 s; one that hangs is a broken installation too. */
const VERSION_TIMEOUT_MS = 10_000;
/** A check that failed is tried again at most this often, when readiness is asked. */
const RETRY_MS = 10_000;

type Probe =
  | { state: 'running' }
  | { state: 'ok'; version: string }
  | { state: 'failed'; error: string; at: number };

/**
 * The PNG renderer's state for readiness, without launching a browser for it: Chromium is launched by the
 * first PNG dashboard (about 150 MB that a replica serving JSON and HTML never needs), so at start this loads
 * puppeteer-core and runs `<CHROMIUM_PATH> --version` once, then follows what the pool saw of its launches.
 */
export class RendererProbe {
  private probe: Probe = { state: 'running' };
  private puppeteerError?: string;

  constructor(
    private readonly executablePath: string,
    private readonly pool: Pick<BrowserPool, 'browserState'>,
    /** How puppeteer-core is loaded (the unit specs, where Jest cannot load it, give their own). */
    private readonly load: () => Promise<unknown> = loadPuppeteer,
  ) {}

  /** Starts the checks; they run in the background and never reject. */
  start(): void {
    this.load().then(
      () => (this.puppeteerError = undefined),
      (error: unknown) => (this.puppeteerError = messageOf(error)),
    );
    this.runVersion();
  }

  state(): RendererState {
    const where = `Chromium at CHROMIUM_PATH (${this.executablePath})`;
    if (this.puppeteerError) {
      return {
        works: false,
        detail: `puppeteer-core could not be loaded (${this.puppeteerError}): PNG dashboards cannot be rendered; HTML dashboards work`,
      };
    }
    const missing = chromiumMissing(this.executablePath);
    if (missing) return { works: false, detail: missing };
    const launch = this.pool.browserState();
    if (launch.launchError) {
      return {
        works: false,
        detail: `${where} could not start (${launch.launchError}): PNG dashboards answer 503 until it can; HTML dashboards work`,
      };
    }
    const probe = this.probe;
    switch (probe.state) {
      case 'running':
        return { works: undefined, detail: `checking ${where}` };
      case 'failed':
        if (Date.now() - probe.at > RETRY_MS) this.runVersion();
        return {
          works: false,
          detail: `${where} does not run (${probe.error}): PNG dashboards cannot be rendered; HTML dashboards work`,
        };
      case 'ok':
        return {
          works: true,
          detail: `${probe.version} at ${this.executablePath}, ${
            launch.running ? 'running' : 'started by the first PNG dashboard'
          }`,
        };
    }
  }

  private runVersion(): void {
    this.probe = { state: 'running' };
    execFile(
      this.executablePath,
      ['--version'],
      { timeout: VERSION_TIMEOUT_MS, maxBuffer: 64 * 1024, encoding: 'utf8' },
      (error, stdout) => {
        const version = stdout.trim().split('\n')[0]?.slice(0, 200) ?? '';
        this.probe =
          error || !version
            ? {
                state: 'failed',
                error: error ? messageOf(error) : 'no version printed',
                at: Date.now(),
              }
            : { state: 'ok', version };
      },
    );
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0].slice(0, 300);
}
