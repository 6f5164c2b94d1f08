import type { Actor } from '@app/platform';
import { COPY_SCRIPT, STYLESHEET } from './assets';
import { html, type SafeHtml } from './html';

/** What every page's frame needs to know about the request. */
export interface PageFrame {
  actor: Actor | undefined;
  /** The path being shown, so sign-in can come back to it. */
  path: string;
}

/** The one Content-Security-Policy of every page: nothing inline, nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A whole page: the header (sign-in or the signed-in user and sign-out), the content, the footer. */
export function page(title: string, frame: PageFrame, content: SafeHtml): SafeHtml {
  const who = frame.actor
    ? html`<a href="/${frame.actor.username}">${frame.actor.username}</a>
        <form method="post" action="/users/sign_out"><button type="submit">Sign out</button></form>`
    : html`<a href="/users/sign_in?return_to=${encodeURIComponent(frame.path)}">Sign in</a>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Lode</title>
        <link rel="stylesheet" href="${STYLESHEET.path}" />
        <script src="${COPY_SCRIPT.path}" defer></script>
      </head>
      <body>
        <header class="top"><a class="brand" href="/">Lode</a>${who}</header>
        <main id="content">${content}</main>
        <footer>
          Read-only pages. Everything else, writes included, is in the API at <code>/api/v4</code> (<a href="/api/docs"
            >reference</a
          >); clone and push with git over HTTP or SSH.
        </footer>
      </body>
    </html> `;
}

/** The page for anything missing or not visible to the caller: the same answer for both. */
export function notFoundPage(frame: PageFrame): SafeHtml {
  return page(
    'Not found',
    frame,
    html`<h1>Page not found</h1>
      <p>
        There is nothing here, or you may not see
        it${frame.actor ? '' : html` (<a href="/users/sign_in?return_to=${encodeURIComponent(frame.path)}">sign in</a> to see more)`}.
      </p>
      <p><a href="/">All projects</a></p>`,
  );
}
