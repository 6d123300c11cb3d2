import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { escapeHtml } from '@/http/html';
import { PolicyDirectives, pagePolicy, policyText } from '@/http/security-headers';

const FRAMED = new Map<string, string>();

/** The name project templates extend: `{% extends "drey/dashboard.html" %}`. */
export const LAYOUT_NAME = 'drey/dashboard.html';

/**
 * Nothing may be loaded from outside the page, in a reader's browser as in the PNG renderer: the policy
 * allows only the page's own inline scripts and styles and data: images. Inline scripts, not hashes: a
 * template that does not extend the layout writes its own (it must set `__dreyReady`), and what the page
 * prints from data and selections is escaped, never markup. Each refusal is reported on the console with a
 * mark that the renderer logs (render/chromium.ts).
 */
const PAGE_DIRECTIVES: PolicyDirectives = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'unsafe-inline'"],
  styleSrc: ["'unsafe-inline'"],
  imgSrc: ['data:'],
  fontSrc: ['data:'],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

/** The policy the layout's `<meta>` carries (a `<meta>` cannot say who may frame the page). */
export const CONTENT_SECURITY_POLICY = policyText(PAGE_DIRECTIVES);

/** The same policy as the response's header, which also covers templates that do not use the layout. */
export const CONTENT_SECURITY_POLICY_HEADER = pagePolicy(PAGE_DIRECTIVES);

/**
 * The page's policy for a deployment that embeds its dashboards: framed by `origins` and no others (modern
 * browsers then ignore X-Frame-Options, which cannot name origins). Made once per list.
 */
export function framedPolicy(origins: readonly string[]): string {
  const key = origins.join(' ');
  let policy = FRAMED.get(key);
  if (policy === undefined) {
    policy = policyText({ ...PAGE_DIRECTIVES, frameAncestors: [...origins] });
    FRAMED.set(key, policy);
  }
  return policy;
}

export const REPORT_REFUSALS = `document.addEventListener('securitypolicyviolation', function (event) {
  console.warn('[drey] refused ' + event.blockedURI);
});`;

/**
 * Draws every chart the helpers declared, then tells the PNG renderer the page is ready. Animations are
 * off so that a chart is complete when drawn; readiness is signalled even if a chart fails, so a broken
 * chart costs a blank panel rather than a render timeout.
 */
export const BOOT_SCRIPT = `(function () {
  'use strict';
  try {
    if (!window.Chart) return;
    var defaults = Chart.defaults;
    defaults.animation = false;
    defaults.responsive = true;
    defaults.maintainAspectRatio = false;
    defaults.font.family = getComputedStyle(document.body).fontFamily;
    defaults.font.size = 12;
    defaults.color = '#5b6372';
    var nodes = document.querySelectorAll('script.drey-chart');
    for (var i = 0; i < nodes.length; i++) {
      try {
        new Chart(nodes[i].parentNode.querySelector('canvas'), JSON.parse(nodes[i].textContent));
      } catch (error) {
        console.error('chart not drawn: ' + (error && error.message));
      }
    }
    // The printed page is narrower than the screen: charts follow it.
    var resize = function () {
      Object.keys(Chart.instances).forEach(function (id) { Chart.instances[id].resize(); });
    };
    window.addEventListener('beforeprint', resize);
    window.addEventListener('afterprint', resize);
    if (window.matchMedia) window.matchMedia('print').addEventListener('change', resize);
  } finally {
    window.__dreyReady = true;
  }
})();`;

/**
 * Tells the page that frames this one its height, whenever it changes (the charts drawn, the window resized,
 * the print preview closed), so that a host can size its `<iframe>` to the content: docs/embedding.md shows
 * the host's few lines. Only a host of EMBED_FRAME_ORIGINS hears it: each message names the origin it is for
 * and the browser drops it when the parent's is another. Where the browser tells who frames the page
 * (`location.ancestorOrigins`, Chromium and Safari), it posts to that origin alone, else to each configured
 * one. The height is the root element's, which is the content's however tall the frame is.
 */
export function resizeScript(origins: readonly string[]): string {
  return `(function () {
  'use strict';
  if (window.parent === window || !window.ResizeObserver) return;
  var origins = ${JSON.stringify(origins)};
  var framer = location.ancestorOrigins && location.ancestorOrigins[0];
  if (framer) origins = origins.filter(function (origin) { return origin === framer; });
  var told = -1;
  var tell = function () {
    var height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === told) return;
    told = height;
    for (var i = 0; i < origins.length; i++) {
      window.parent.postMessage({ type: 'drey:resize', height: height }, origins[i]);
    }
  };
  new ResizeObserver(tell).observe(document.documentElement);
})();`;
}

/** Blocks project templates fill: `content` (the panels), and optionally `head`, `header`, `footer`. */
export const LAYOUT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ drey.policy }}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ dashboard.label }} · {{ project.label }}</title>
<script>{{ drey.reportRefusals }}</script>
<style>{{ drey.css }}</style>
{% block head %}{% endblock %}
</head>
<body class="format-{{ dashboard.format }}">
<main class="page">
{% block header %}
<header class="page-header">
  <div class="eyebrow">{{ project.label }}</div>
  <h1>{{ dashboard.label }}</h1>
  {% if dashboard.description %}<p class="description">{{ dashboard.description }}</p>{% endif %}
  {% if selections | length %}
  <dl class="selections">
    {% for selection in selections %}<div><dt>{{ selection.label }}</dt><dd>{{ selection.text }}</dd></div>{% endfor %}
  </dl>
  {% endif %}
</header>
{% endblock %}
<div class="board">
{% block content %}{% endblock %}
</div>
{% block footer %}
<footer class="page-footer">{{ project.label }} · {{ dashboard.label }} · rendered {{ rendered_at }}</footer>
{% endblock %}
</main>
<script>{{ drey.chartjs }}</script>
<script>{{ drey.boot }}</script>
{% if drey.resize %}<script>{{ drey.resize }}</script>
{% endif %}</body>
</html>
`;

let chartJs: string | undefined;

/** Where Drey serves Chart.js, under the project's prefix: `P/dashboard-assets/chart.umd.min.js`. */
export const CHART_JS_ROUTE = 'dashboard-assets/chart.umd.min.js';

/**
 * A page of the layout with Chart.js loaded from `src` (Drey's own copy, served at {@link CHART_JS_ROUTE})
 * rather than inlined: 200 KB less, for an assistant that reads the page as text. Its policy allows that one
 * script besides the page's own, and still nothing else. A page that does not use the layout has no Chart.js
 * of ours, and is left as it is.
 */
export function withChartJsFrom(html: string, src: string): string {
  const inlined = `<script>${chartJsSource()}</script>`;
  const at = html.indexOf(inlined);
  if (at < 0) return html;
  const policy = policyText({ ...PAGE_DIRECTIVES, scriptSrc: ["'unsafe-inline'", src] });
  const page = `${html.slice(0, at)}<script src="${escapeHtml(src)}"></script>${html.slice(at + inlined.length)}`;
  return page.replace(
    /<meta http-equiv="Content-Security-Policy" content="[^"]*">/,
    () => `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(policy)}">`,
  );
}

/** Chart.js, inlined into every page (read once): pages are self-contained and load nothing. */
export function chartJsSource(): string {
  if (chartJs === undefined) {
    // `chart.js` resolves to dist/chart.cjs; the browser build sits beside it.
    const file = join(dirname(require.resolve('chart.js')), 'chart.umd.min.js');
    chartJs = readFileSync(file, 'utf8').replace(/<\/(script)/gi, '<\\/$1');
  }
  return chartJs;
}
