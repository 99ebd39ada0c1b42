import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The Codeloom mark: two interlaced threads. Decorative, so hidden from assistive technology. */
export const LOGO_SVG = `<svg class="mark" viewBox="0 0 32 32" width="32" height="32" aria-hidden="true" focusable="false">
<rect width="32" height="32" rx="9" fill="#4338ca"/>
<path d="M9 11.5c4.5 0 4.5 9 9 9h5" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round"/>
<path d="M9 20.5c4.5 0 4.5-9 9-9h5" fill="none" stroke="#c7d2fe" stroke-width="2.6" stroke-linecap="round"/></svg>`;

const STYLE = `
:root{--bg:#f3f4f8;--card:#fff;--text:#161b2e;--muted:#5a6178;--line:#dfe3ee;--accent:#4338ca;--accent-hover:#3730a3;--accent-soft:#eef0ff;--danger:#b42318;--danger-soft:#fef3f2;--focus:0 0 0 3px rgba(67,56,202,.35);color-scheme:light}
@media (prefers-color-scheme:dark){:root{--bg:#0f1220;--card:#181c2e;--text:#eceefa;--muted:#a5abc3;--line:#2c3250;--accent:#818cf8;--accent-hover:#a5b4fc;--accent-soft:#23284a;--danger:#fda29b;--danger-soft:#3a1d1d;--focus:0 0 0 3px rgba(129,140,248,.45);color-scheme:dark}}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;padding:2rem 1rem;font:16px/1.5 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--text);background:radial-gradient(1200px 500px at 50% -10%,var(--accent-soft),transparent 70%),var(--bg)}
main{width:100%;max-width:26rem}
.brand{display:flex;align-items:center;justify-content:center;gap:.6rem;margin-bottom:1.25rem;font-weight:650;font-size:1.15rem;letter-spacing:-.01em}
.card{background:var(--card);border:1px solid var(--line);border-radius:16px;padding:2rem;box-shadow:0 1px 2px rgba(16,24,40,.04),0 12px 32px -12px rgba(16,24,40,.18)}
.card>:last-child{margin-bottom:0}
@media (max-width:420px){.card{padding:1.5rem 1.25rem}}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 .35rem;letter-spacing:-.015em}
.lead{margin:0 0 1.5rem;color:var(--muted)}
.lead strong{color:var(--text)}
label{display:block;font-weight:600;font-size:.9rem;margin:0 0 .35rem}
.field{margin-bottom:1rem}
input[type=email],input[type=password]{width:100%;height:2.75rem;padding:0 .8rem;font:inherit;color:var(--text);background:var(--card);border:1px solid #b9c0d4;border-radius:8px;transition:border-color .15s,box-shadow .15s}
input:focus{outline:none;border-color:var(--accent);box-shadow:var(--focus)}
input[aria-invalid=true]{border-color:var(--danger)}
button{font:inherit;font-weight:600;height:2.75rem;padding:0 1.1rem;border-radius:8px;cursor:pointer;transition:background-color .15s,border-color .15s}
button:focus-visible,a:focus-visible{outline:none;box-shadow:var(--focus)}
.primary{width:100%;border:1px solid var(--accent);background:var(--accent);color:#fff}
.primary:hover{background:var(--accent-hover);border-color:var(--accent-hover)}
.secondary{border:1px solid #b9c0d4;background:var(--card);color:var(--text)}
.secondary:hover{background:var(--bg)}
@media (prefers-color-scheme:dark){.primary{color:#0f1220}}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
.actions button{flex:1}
.alert{display:flex;gap:.6rem;align-items:flex-start;margin:0 0 1.25rem;padding:.75rem .9rem;border-radius:8px;background:var(--danger-soft);color:var(--danger);font-size:.92rem}
.alert svg{flex:none;margin-top:.15rem}
.apps{display:flex;align-items:center;justify-content:center;gap:.75rem;margin:0 0 1.25rem}
.app-badge{width:3rem;height:3rem;border-radius:12px;display:grid;place-items:center;font-weight:700;font-size:1.25rem;color:#fff;background:linear-gradient(135deg,#0e9384,#155eef)}
.apps .mark{width:3rem;height:3rem}
.dots{color:var(--muted);letter-spacing:.2em}
.account{display:flex;align-items:center;justify-content:space-between;gap:.75rem;padding:.7rem .9rem;border:1px solid var(--line);border-radius:10px;margin-bottom:1.25rem}
.account .who{min-width:0}
.account .name{font-weight:600;display:block;overflow-wrap:anywhere}
.account .email{color:var(--muted);font-size:.88rem;display:block;overflow-wrap:anywhere}
.account form{margin:0;flex:none}
.link{height:auto;padding:.25rem .4rem;border:0;background:none;color:var(--accent);font-weight:600;font-size:.88rem;text-decoration:underline;text-underline-offset:2px}
h2{font-size:.95rem;margin:0 0 .6rem}
.scopes{list-style:none;margin:0;padding:0;border-top:1px solid var(--line)}
.scopes li{display:flex;gap:.75rem;padding:.8rem 0;border-bottom:1px solid var(--line)}
.scopes svg{flex:none;margin-top:.15rem;color:var(--accent)}
.scopes strong{display:block;font-size:.95rem}
.scopes span{display:block;color:var(--muted);font-size:.88rem}
.note{margin:1rem 0 0;color:var(--muted);font-size:.85rem}
.note code{font-size:.85rem;overflow-wrap:anywhere}
footer{margin-top:1.5rem;color:var(--muted);font-size:.8rem;text-align:center}
footer a{color:inherit}
`;

export interface RenderedPage { html: string; nonce: string }

/** Wraps a page body in the shared shell. Styles are inline, allowed by a per-response CSP nonce; no scripts at all. */
export function renderPage(title: string, body: string): RenderedPage {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Codeloom</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<div class="brand">${LOGO_SVG}<span>Codeloom</span></div>
${body}
</main>
<footer>Codeloom never shares your password with other applications.</footer>
</body>
</html>`;
  return { html, nonce };
}

/**
 * Sends a page with headers that keep it out of caches and frames (no
 * clickjacking of the Allow button). `formTargets` are the origins a form
 * on the page may end up at: the consent form's 303 leads to the client.
 */
export function sendPage(reply: FastifyReply, status: number, page: RenderedPage, formTargets: string[] = []) {
  const csp = [
    "default-src 'none'", `style-src 'nonce-${page.nonce}'`, "img-src 'self' data:", "base-uri 'none'",
    "frame-ancestors 'none'", `form-action 'self'${formTargets.map((o) => ` ${o}`).join('')}`,
  ].join('; ');
  return reply.code(status).headers({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on form posts, which the CSRF check reads.
    'referrer-policy': 'same-origin',
  }).send(page.html);
}
