import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JsonLogger } from '@/runtime/json-logger';
import type { AppConfig } from '@/config/config';
import { chromiumMissing } from '@/dashboards/render/chromium';
import { BrowserPool } from '@/dashboards/render/browser-pool';
import { LAYOUT_SHELL } from '@/dashboards/template/page-shell';

/**
 * The PNG renderer's pool, sized from the configuration, with its metrics in the service's registry: how
 * many pages are open and busy (and the most ever open, which must stay within RENDER_PAGES), the queue,
 * render durations by outcome, browser launches (more than one means Chromium died and was relaunched) and
 * how pages were drawn: swapped into the layout's shell, or loaded whole (a template with scripts of its own).
 */
export function createBrowserPool(
  config: AppConfig,
  logger: JsonLogger,
  registry: Registry,
): BrowserPool {
  const durations = new Histogram({
    name: 'drey_render_duration_seconds',
    help: 'PNG dashboard renders by outcome (ok, retried, timeout, refused, error), queue wait included',
    labelNames: ['outcome'],
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  const launches = new Counter({
    name: 'drey_render_browser_launches_total',
    help: 'Chromium launches of the PNG renderer',
    registers: [registry],
  });
  const drawn = new Counter({
    name: 'drey_render_pages_drawn_total',
    help: 'PNG dashboard pages drawn: swapped into a warm page of the layout, or loaded whole',
    labelNames: ['by'],
    registers: [registry],
  });
  const missing = chromiumMissing(config.chromiumPath);
  if (missing) logger.emit('warn', missing);
  const pool = new BrowserPool(
    {
      executablePath: config.chromiumPath,
      maxPages: config.renderPages,
      maxQueued: config.renderQueue,
      renderTimeoutMs: config.renderTimeoutMs,
      shell: LAYOUT_SHELL,
    },
    logger,
    {
      rendered: (outcome, seconds) => durations.observe({ outcome }, seconds),
      launched: () => launches.inc(),
      drawn: (by) => drawn.inc({ by }),
    },
  );
  new Gauge({
    name: 'drey_render_pages',
    help: 'Chromium pages of the PNG renderer: open (including being opened or closed) and busy',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = pool.stats();
      this.set({ state: 'open' }, stats.pagesOpen);
      this.set({ state: 'busy' }, stats.pagesBusy);
    },
  });
  new Gauge({
    name: 'drey_render_pages_peak',
    help: 'The most Chromium pages ever open at once (never above RENDER_PAGES)',
    registers: [registry],
    collect() {
      this.set(pool.stats().peakPagesOpen);
    },
  });
  new Gauge({
    name: 'drey_render_pages_limit',
    help: 'RENDER_PAGES: the most Chromium pages the renderer may open',
    registers: [registry],
  }).set(config.renderPages);
  new Gauge({
    name: 'drey_render_queue',
    help: 'PNG renders waiting for a Chromium page',
    registers: [registry],
    collect() {
      this.set(pool.stats().queued);
    },
  });
  return pool;
}
