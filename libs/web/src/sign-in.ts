import { html, type SafeHtml } from './html';
import { page, type PageFrame } from './layout';

/** Where to go after signing in: a path on this site only (never `//host` or a scheme), else the home page. */
export function safeReturnTo(value: string): string {
  return /^\/(?![/\\])[^\s]*$/.test(value) && value.length <= 2000 ? value : '/';
}

const MESSAGES: Record<string, string> = {
  invalid: 'Invalid login or password.',
  blocked: 'Your account is blocked or deactivated.',
  throttled: 'Too many failed attempts: wait a while and try again.',
  scope: 'That access token has neither the api nor the read_api scope.',
  origin: 'The form was sent from another site.',
};

/** The sign-in form: username or e-mail and password, or a personal access token in the password field. */
export function signInPage(frame: PageFrame, returnTo: string, error: string | undefined): SafeHtml {
  return page(
    'Sign in',
    frame,
    html`<h1>Sign in</h1>
      ${error ? html`<p class="error" role="alert">${MESSAGES[error] ?? MESSAGES.invalid}</p>` : ''}
      <form class="signin" method="post" action="/users/sign_in">
        <input type="hidden" name="return_to" value="${safeReturnTo(returnTo)}" />
        <label for="login">Username or e-mail</label>
        <input id="login" name="login" autocomplete="username" autocapitalize="none" spellcheck="false" />
        <label for="password">Password, or a personal access token (leave the username empty)</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button class="btn" type="submit">Sign in</button>
      </form>
      <p class="muted">
        Signing in shows the internal and private projects you may read. Nothing can be changed here: writes go through
        the API.
      </p>`,
  );
}
