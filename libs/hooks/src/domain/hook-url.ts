/**
 * A hook URL's user info (`https://user:password@host/`) is a credential of the receiver. Lode keeps
 * the URL as given only sealed (`project_hook_secrets`); events, the read model and every answer
 * hold it masked.
 */
export const MASK = '*****';

/** Whether the URL carries a user name or a password. */
export function hasCredentials(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/**
 * The URL with its password replaced by `*****`; a user name alone (often a token itself, as in
 * `https://<token>@host/`) is masked the same way. A URL that does not parse is kept: the SSRF check
 * refuses it before it is stored.
 */
export function maskCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = MASK;
    else if (url.username) url.username = MASK;
    else return raw;
    return url.toString();
  } catch {
    return raw;
  }
}

/** The URL without user info, for the delivery log. */
export function withoutCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return raw;
  }
}
