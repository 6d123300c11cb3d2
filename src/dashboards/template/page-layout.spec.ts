import { escapeHtml } from '@/http/html';
import {
  CONTENT_SECURITY_POLICY,
  chartJsSource,
  withChartJsFrom,
} from '@/dashboards/template/page-layout';

const SRC =
  'https://drey.example.com/api/service-v0/project/expenses/v1/dashboard-assets/chart.umd.min.js';

function page(body: string): string {
  return (
    '<!doctype html><html><head>' +
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CONTENT_SECURITY_POLICY)}">` +
    `</head><body>${body}</body></html>`
  );
}

describe('withChartJsFrom', () => {
  it('loads Chart.js from Drey instead of inlining it, and allows that one script only', () => {
    const html = page(`<main>$&</main><script>${chartJsSource()}</script><script>boot()</script>`);
    const out = withChartJsFrom(html, SRC);
    expect(out).not.toContain(chartJsSource());
    expect(out).toContain(`<script src="${SRC}"></script><script>boot()</script>`);
    // A `$&` of the page is not read as a replacement pattern.
    expect(out).toContain('<main>$&</main>');
    expect(out).toContain(`script-src &#39;unsafe-inline&#39; ${SRC}`);
    expect(out).toContain('default-src &#39;none&#39;');
    expect(out.length).toBeLessThan(html.length - 150_000);
  });

  it('leaves a page without the inlined Chart.js as it is', () => {
    const html = page('<p>own template</p>');
    expect(withChartJsFrom(html, SRC)).toBe(html);
  });
});
