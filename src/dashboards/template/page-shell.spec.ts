import { LAYOUT_SHELL } from '@/dashboards/template/page-shell';
import { CONTENT_SECURITY_POLICY, chartJsSource } from '@/dashboards/template/page-layout';
import { escapeHtml } from '@/http/html';

/** What the shell does in Node; what it does in Chromium is in test/integration/dashboard-page-reuse. */
describe('LAYOUT_SHELL', () => {
  const chart = () => `<script>${chartJsSource()}</script>`;

  it('takes a page of the layout without its Chart.js, which the shell carries', () => {
    const html = `<!doctype html><html><body><main>x</main>${chart()}<script>boot</script></body></html>`;
    expect(LAYOUT_SHELL.payload(html)).toBe(
      '<!doctype html><html><body><main>x</main><script>boot</script></body></html>',
    );
    expect(LAYOUT_SHELL.document).toContain(chart());
    expect(LAYOUT_SHELL.document).toContain(`content="${escapeHtml(CONTENT_SECURITY_POLICY)}"`);
  });

  it('leaves a page without the layout’s Chart.js, or with it twice, to be loaded whole', () => {
    expect(
      LAYOUT_SHELL.payload('<!doctype html><p>own page</p><script>x()</script>'),
    ).toBeUndefined();
    expect(LAYOUT_SHELL.payload(`<p>${chart()}${chart()}</p>`)).toBeUndefined();
  });

  it('passes the payload to the page as a JSON string, whatever it holds', () => {
    const payload = '</script><script>"\'`${x}\u2028';
    const expression = LAYOUT_SHELL.swap(payload);
    expect(expression).toBe(`window.__dreySwap(${JSON.stringify(payload)})`);
    const argument = expression.slice('window.__dreySwap('.length, -1);
    expect(JSON.parse(argument)).toBe(payload);
  });
});
