/** What a secret is replaced with. */
export const FILTERED = '[FILTERED]';

/** Parameter and field names whose values are secrets: `private_token`, `X-Gitlab-Token`, `password`, `user[password]`... */
const SECRET_NAME = String.raw`[\w\-\[\]%]*?(?:token|password|passwd|secret|api[-_]?key)(?:[_-]\w+|\]|%5D)*`;
/** Headers whose values are credentials, whatever their name says. */
const SECRET_HEADER = String.raw`(?:proxy-)?authorization|cookie|set-cookie`;

/**
 * Schemes whose user name is an account, not a credential: `ssh://git@host`, `postgres://lode@db`.
 * Their password (if any) is filtered and the name kept. Elsewhere (http, https and the rest) the
 * whole user info goes: a token is often sent as the user name (`https://<token>@host`).
 */
const ACCOUNT_SCHEMES = new Set([
  'ssh',
  'git+ssh',
  'ssh+git',
  'postgres',
  'postgresql',
  'redis',
  'rediss',
  'amqp',
  'amqps',
]);

const userInfo = (_match: string, scheme: string, info: string): string => {
  const name = scheme.slice(0, -3).toLowerCase();
  if (!ACCOUNT_SCHEMES.has(name)) return `${scheme}${FILTERED}@`;
  const colon = info.indexOf(':');
  return colon === -1 ? `${scheme}${info}@` : `${scheme}${info.slice(0, colon)}:${FILTERED}@`;
};

const RULES: [RegExp, string | ((...args: string[]) => string)][] = [
  // URL user info (`https://user:password@host`, `http://oauth2:<token>@host`): all of it, but the
  // account name of the schemes above (`ssh://git@host` stays readable).
  [/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@"'<>]+)@/gi, userInfo],
  // Query strings and form bodies: `?private_token=...`, `&password=...`.
  [new RegExp(String.raw`((?:^|[?&;\s"'])${SECRET_NAME}=)[^&\s#"',;:]*`, 'gi'), `$1${FILTERED}`],
  // Headers and fields as logged: `PRIVATE-TOKEN: x`, `"token":"x"`, `authorization: 'Basic x'`.
  [
    new RegExp(
      String.raw`((?<![\w./\\-])(?:${SECRET_HEADER}|${SECRET_NAME})["']?\s*[:=]\s*["']?)((?:basic|bearer|token)\s+)?[^"'\s,;:&}]+`,
      'gi',
    ),
    `$1$2${FILTERED}`,
  ],
  // Standard Webhooks signing secrets (`whsec_<base64>`), wherever they appear.
  [/\bwhsec_[A-Za-z0-9+/=]+/g, FILTERED],
  // Credentials with no name before them: `Basic dXNlcjpwYXNz`, `Bearer abc`.
  [/\b(basic|bearer)\s+[A-Za-z0-9+/=._~-]{8,}/gi, `$1 ${FILTERED}`],
];

/**
 * The one place that strips credentials from text bound for a log: URL user info, `private_token`
 * and other secret-named parameters, `PRIVATE-TOKEN`, `Authorization` (Basic and Bearer),
 * `X-Gitlab-Token`, passwords. Every log line that may print a URL, headers or an error built from
 * them goes through it (and `RedactingLogger` applies it to every line as a last resort).
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES)
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  return out;
}

const SECRET_HEADER_NAME = new RegExp(String.raw`^(?:${SECRET_HEADER}|${SECRET_NAME})$`, 'i');

/** Whether a header, parameter or field of that name holds a credential (`PRIVATE-TOKEN`, `password`, `authorization`...). */
export function isSecretName(name: string): boolean {
  return SECRET_HEADER_NAME.test(name);
}

/** A copy of request or response headers fit for a log: credential headers' values replaced. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = SECRET_HEADER_NAME.test(name) ? FILTERED : typeof value === 'string' ? redactSecrets(value) : value;
  return out;
}
