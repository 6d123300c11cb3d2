import {
  BOOT_SCRIPT,
  CONTENT_SECURITY_POLICY,
  REPORT_REFUSALS,
  chartJsSource,
} from '@/dashboards/template/page-layout';
import { scriptJson } from '@/dashboards/template/helper-input';
import { escapeHtml } from '@/http/html';

/**
 * A warm page for PNG renders of pages that use the layout. Loading a page as a document of its own costs
 * most of a render: Chromium parses, compiles and runs the 200 KB of Chart.js each time. The shell is a
 * document of ours with Chart.js already run; a render parses its page with the browser's own parser
 * (DOMParser: nothing runs), checks it, moves its head and body into the shell and runs the layout's own
 * scripts there, a fraction of that time (see docs/performance.md, "Figures behind the code", "The page
 * shell").
 * The screenshot is byte for byte the one of the page loaded whole (test/integration/dashboard-page-reuse).
 *
 * Isolation between callers: a shell is reused by renders of different callers, so no script of a project
 * may ever run in it. A page is swapped in only when every element is on the list below, no attribute is an
 * event handler or a `javascript:` URL, and every script is the layout's own or a chart's JSON (data, read
 * with JSON.parse); anything else (a template's own script, an `<img onerror>`, an `<iframe>`, SVG) makes
 * the renderer load the page as before, in a new window (render/page-drawer.ts). The list also leaves
 * out what loads after the document (images, fonts, `url(...)` in styles): a swapped page is complete
 * when its scripts have run, as a loaded one is at its `load` event.
 *
 * What a shell gathers over its renders (the layout's script adds its print listeners each time, V8's heap
 * grows) is bounded by the pool, which replaces a page after `rendersPerPage` renders.
 */

/** What the layout and the helpers write, and the plain text elements a template adds around them. */
const ELEMENTS = [
  'html head body meta title style script main header footer section article aside nav div span p',
  'h1 h2 h3 h4 h5 h6 dl dt dd ul ol li figure figcaption',
  'table caption colgroup col thead tbody tfoot tr th td',
  'strong em b i u s small sub sup mark abbr time code pre blockquote q cite br hr wbr canvas',
]
  .join(' ')
  .split(' ');

/** The layout's scripts other than Chart.js, in the order they run; the first is run once per shell. */
const KNOWN_SCRIPTS = [REPORT_REFUSALS, BOOT_SCRIPT];

/**
 * Installed in the shell as `__dreySwap(payload)`: the page's height once swapped in and drawn, or -1 when
 * the page may not be swapped in (then nothing in the shell has changed). Plain ES2017 run by Chromium.
 */
const SWAP_SCRIPT = `window.__dreySwap = (function (known, elements, policy) {
  'use strict';
  var HTML = 'http://www.w3.org/1999/xhtml';
  var allowed = new Set(elements);
  // Event handlers, attributes that name something to fetch or open, and autofocus (done once per document:
  // a later page would not get it, and a focused element scrolls the page).
  var REFUSED_ATTRIBUTE = /^(?:on|(?:src|srcset|href|xlink:href|background|poster|data|action|formaction|ping|manifest|lowsrc|dynsrc|autofocus)$)/i;
  // Script URLs, and CSS that loads something (an image, a font, a style sheet).
  var LOADS = /(?:java|vb)script:|url\\(|image-set|@import|@font-face/i;
  var refusalsReported = false;
  function refused(doc) {
    var all = doc.getElementsByTagName('*');
    // The swap runs the scripts once the page is in place: the layout's drawing script must come last, as
    // in the layout, for it to see what it sees there.
    var drawing = -1;
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (drawing >= 0 && el.localName !== 'script') return true;
      if (el.namespaceURI !== HTML || !allowed.has(el.localName)) return true;
      for (var j = 0; j < el.attributes.length; j++) {
        var attr = el.attributes[j];
        if (REFUSED_ATTRIBUTE.test(attr.name) || LOADS.test(attr.value.replace(/[\\s\\u0000-\\u001f]/g, ''))) return true;
      }
      // A policy stays with the document: one other than the shell's own would apply to later renders.
      if (el.localName === 'meta' && el.hasAttribute('http-equiv') &&
          (el.getAttribute('http-equiv').toLowerCase() !== 'content-security-policy' ||
            el.getAttribute('content') !== policy)) return true;
      if (el.localName === 'style' && LOADS.test(el.textContent)) return true;
      if (el.localName === 'script') {
        var data = el.getAttribute('type') === 'application/json' &&
          Array.prototype.every.call(el.attributes, function (a) { return a.name === 'type' || a.name === 'class'; });
        if (!data && (el.attributes.length > 0 || known.indexOf(el.textContent) < 0)) return true;
        if (el.textContent === known[1] && drawing < 0) drawing = i;
      }
    }
    return false;
  }
  return function (payload) {
    var doc = new DOMParser().parseFromString(payload, 'text/html');
    if (refused(doc)) return -1;
    Object.keys(Chart.instances).forEach(function (id) { Chart.instances[id].destroy(); });
    var scripts = [];
    Array.prototype.forEach.call(doc.querySelectorAll('script:not([type])'), function (script) {
      scripts.push(script.textContent);
      script.remove();
    });
    var root = document.documentElement;
    while (root.attributes.length > 0) root.removeAttribute(root.attributes[0].name);
    Array.prototype.forEach.call(doc.documentElement.attributes, function (attr) {
      root.setAttribute(attr.name, attr.value);
    });
    document.head.replaceChildren.apply(document.head, Array.from(doc.head.childNodes));
    document.body.replaceWith(document.adoptNode(doc.body));
    // Where the last page left the scroll, as a new document has it.
    window.scrollTo(0, 0);
    window.__dreyReady = false;
    scripts.forEach(function (text) {
      if (text === known[0]) {
        if (refusalsReported) return;
        refusalsReported = true;
      }
      var script = document.createElement('script');
      script.textContent = text;
      document.body.appendChild(script);
      script.remove();
    });
    return window.__dreyReady === true ? document.documentElement.scrollHeight : -1;
  };
})(${scriptJson(KNOWN_SCRIPTS)}, ${scriptJson(ELEMENTS)}, ${scriptJson(CONTENT_SECURITY_POLICY)});`;

let shellDocument: string | undefined;
let chartTag: string | undefined;

/** The shell as the PNG renderer uses it (render/page-drawer.ts `PageShell`). */
export const LAYOUT_SHELL = {
  /** Same policy as the layout's pages; Chart.js run once; the swap. */
  get document(): string {
    shellDocument ??=
      '<!doctype html><html><head><meta charset="utf-8">' +
      `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CONTENT_SECURITY_POLICY)}">` +
      `</head><body><script>${chartJsSource()}</script><script>${SWAP_SCRIPT}</script></body></html>`;
    return shellDocument;
  },

  /**
   * A page of the layout without its Chart.js (the shell has it), or undefined for a page that does not
   * carry the layout's Chart.js exactly once: one that does not extend the layout is loaded whole.
   */
  payload(html: string): string | undefined {
    chartTag ??= `<script>${chartJsSource()}</script>`;
    const at = html.indexOf(chartTag);
    if (at < 0 || html.indexOf(chartTag, at + chartTag.length) >= 0) return undefined;
    return html.slice(0, at) + html.slice(at + chartTag.length);
  },

  swap(payload: string): string {
    return `window.__dreySwap(${JSON.stringify(payload)})`;
  },
};
