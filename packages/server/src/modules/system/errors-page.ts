import { ERROR_CODES } from '@codeloom/protocol';

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** /docs/errors: the page every problem document's `type` points at, one anchor per code. */
export function renderErrorsPage(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, e]) =>
    `<tr id="${code}"><td><code>${code}</code></td><td>${e.status} ${escape(e.title)}</td><td>${escape(e.detail)}</td></tr>`).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Codeloom error codes</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2330}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #dde;padding:.5rem;text-align:left;vertical-align:top}
tr:target{background:#fff6d5}code{font-size:.95em}</style></head><body>
<h1>Error codes</h1><p>Every error is an RFC 9457 problem document (<code>application/problem+json</code>) whose <code>code</code> is one of these. See also <a href="/docs">the API reference</a>.</p>
<table><thead><tr><th>code</th><th>status</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}
