import { escapeText } from '../formats/escape.js';
import { GENERATED_HTML_CSP } from '../formats/html.js';

/**
 * The confirmation page of a callback URL (`GET /api/callbacks/<token>`, issue 21): a GET must
 * never decide (mail scanners and link previews fetch every link), so it shows two buttons that
 * POST back to the same URL. No script; the strict CSP of generated pages, with forms allowed
 * to post to this gateway only.
 */

/** The page's CSP: the generated pages' one, with `form-action 'self'`. */
export const CALLBACK_PAGE_CSP = GENERATED_HTML_CSP.replace("form-action 'none'", "form-action 'self'");

/** The page for a wait; `action` is the path of this callback (already a safe token path). */
export function callbackPage(
  action: string,
  info: { runId: string; step: string; until: string; approval: boolean },
): string {
  const a = escapeText(action);
  const verb = info.approval ? 'Approve' : 'Confirm';
  return (
    '<!doctype html><html><head><meta charset="utf-8"><meta name="robots" content="noindex">' +
    `<title>${verb}</title><style>body{font-family:sans-serif;max-width:32em;margin:2em auto}` +
    'button{font-size:1em;padding:.5em 1.5em;margin-right:1em}</style></head><body>' +
    `<h1>${verb}?</h1><p>Run <code>${escapeText(info.runId)}</code> waits at step <code>${escapeText(info.step)}</code> ` +
    `until ${escapeText(info.until)}.</p>` +
    `<form method="post" action="${a}" style="display:inline"><button type="submit">${verb}</button></form>` +
    `<form method="post" action="${a}?decision=reject" style="display:inline"><button type="submit">Reject</button></form>` +
    '</body></html>'
  );
}

/**
 * A request path as logged: a callback token is a capability, so it never reaches a log line,
 * nor when it comes spelled otherwise (`//api/callbacks/T`, `/api/%63allbacks/T`, any case):
 * those answer 404, and the token they carry still works on the real path.
 */
export function withoutToken(path: string): string {
  if (path.startsWith('/api/callbacks/')) return '/api/callbacks/<token>';
  // the common path costs two searches; only a path that could spell it otherwise is decoded
  if (!path.includes('%') && !/allbacks/i.test(path)) return path;
  let plain = path;
  try {
    plain = decodeURIComponent(path);
  } catch {
    /* malformed: judged as sent */
  }
  return /\/api\/callbacks\//i.test(plain.replace(/\/+/g, '/')) ? '/api/callbacks/<token>' : path;
}
