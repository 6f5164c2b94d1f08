/**
 * GitLab's path rules for namespaces (usernames now, group paths later): letters, digits, `_`, `-`
 * and `.`; not starting with `-` or `.`; not ending in `.`, `.git` or `.atom`; not a reserved
 * top-level route (`Gitlab::PathRegex::TOP_LEVEL_ROUTES`).
 */
export const RESERVED_TOP_LEVEL = new Set([
  '-',
  '.well-known',
  'abuse_reports',
  'admin',
  'api',
  'assets',
  'autocomplete',
  'ci',
  'dashboard',
  'explore',
  'files',
  'groups',
  'health_check',
  'help',
  'import',
  'invites',
  'jwt',
  'koding',
  'notification_settings',
  'oauth',
  'profile',
  'projects',
  'public',
  'robots.txt',
  's',
  'search',
  'sent_notifications',
  'slash-command-logo.png',
  'snippets',
  'u',
  'unicorn_test',
  'unsubscribes',
  'uploads',
  'users',
  'root-ghost',
]);

const PATH = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
export const PATH_FORMAT_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.', end in '.', '.git' or end in '.atom'";

/** The messages GitLab gives for a bad path, empty when it is fine. */
export function namespacePathErrors(path: string, topLevel: boolean): string[] {
  if (!path) return ["can't be blank"];
  const errors: string[] = [];
  if (path.length > 255) errors.push('is too long (maximum is 255 characters)');
  if (!PATH.test(path) || /(\.|\.git|\.atom)$/i.test(path)) errors.push(PATH_FORMAT_MESSAGE);
  if (topLevel && RESERVED_TOP_LEVEL.has(path.toLowerCase())) errors.push(`${path} is a reserved name`);
  return errors;
}
