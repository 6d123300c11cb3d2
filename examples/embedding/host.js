#!/usr/bin/env node
// A host application that embeds Drey (docs/embedding.md): its server signs short-lived embedding tokens
// with EMBED_SECRET, and its page shows a Drey dashboard in an iframe sized to its content, a PNG dashboard
// as an image and a dataset's rows fetched by the browser. Node alone, no packages: the token is an HS256
// JWT made with node:crypto.
'use strict';

const { createHmac, randomUUID } = require('node:crypto');
const { createServer } = require('node:http');

const DREY_URL = (process.env.DREY_URL || 'http://127.0.0.1:4465').replace(/\/$/, '');
const DREY_ORIGIN = new URL(DREY_URL).origin;
const SECRET = process.env.EMBED_SECRET;
const PORT = Number(process.env.PORT || 8080);
const PROJECT = '/api/service-v0/project/expenses/v1';
if (!SECRET) {
  console.error('Set EMBED_SECRET to the secret Drey was started with');
  process.exit(1);
}

/** An embedding token: one item, the values it locks, the viewer's attributes; ten minutes. */
function embedToken(claims) {
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = {
    aud: 'drey-embed',
    iat: now,
    exp: now + 600,
    jti: randomUUID(),
    // The project and major version the token is for: any other project refuses it.
    project: 'expenses/v1',
    // Who views, as this application knows them: Drey's logs name them `embed:<sub>`.
    sub: 'demo-viewer',
    ...claims,
  };
  const signed = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(body)}`;
  return `${signed}.${createHmac('sha256', SECRET).update(signed).digest('base64url')}`;
}

function page() {
  // The report from June on: the viewer cannot change its start.
  const report = embedToken({
    resource: { dashboard: 'expenses_report' },
    params: { start_date: '2024-06-01' },
  });
  // The PNG overview of the second half of 2024, locked, shown as an image.
  const overview = embedToken({
    resource: { dashboard: 'expenses_dashboard' },
    params: { date_range: ['2024-07-01', '2024-12-31'] },
  });
  // Monthly totals of amounts up to 100: locked too, read by this page's script.
  const totals = embedToken({
    resource: { dataset: 'expenses_by_month' },
    params: { max_filter: 100 },
  });
  const frame = `${DREY_URL}${PROJECT}/dashboards/expenses_report/results?x_embed_token=${report}`;
  const image = `${DREY_URL}${PROJECT}/dashboards/expenses_dashboard/results?x_embed_token=${overview}`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Host application</title></head>
<body>
<h1>Our spending, from Drey</h1>
<iframe id="report" title="Expenses report" src="${frame}" width="960" height="640"
  style="border: 0; display: block"></iframe>
<script>
// The report tells its height whenever it changes: the frame takes it, so the report never scrolls.
const DREY = ${JSON.stringify(DREY_ORIGIN)};
window.addEventListener('message', (event) => {
  const frame = document.getElementById('report');
  if (event.origin !== DREY || event.source !== frame.contentWindow) return;
  if (event.data?.type === 'drey:resize') frame.style.height = event.data.height + 'px';
});
</script>
<h2>The second half of 2024</h2>
<img id="overview" alt="Expenses dashboard, July to December 2024" src="${image}" width="960">
<h2>Monthly totals (amounts up to 100)</h2>
<table id="totals"><thead><tr><th>Month</th><th>Total</th></tr></thead><tbody></tbody></table>
<script>
fetch(${JSON.stringify(`${DREY_URL}${PROJECT}/datasets/expenses_by_month/results`)}, {
  headers: { Authorization: 'Bearer ${totals}' },
})
  .then((response) => response.json())
  .then((result) => {
    const body = document.querySelector('#totals tbody');
    for (const row of result.data) {
      const line = body.insertRow();
      line.insertCell().textContent = row.month;
      line.insertCell().textContent = row.total_amount;
    }
    document.body.dataset.loaded = String(result.data.length);
  });
</script>
</body>
</html>`;
}

createServer((request, response) => {
  if (request.url !== '/') {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  response.end(page());
}).listen(PORT, '127.0.0.1', () => {
  console.log(`host application on http://127.0.0.1:${PORT}/`);
});
