/**
 * HTML made safe by construction: every value put into an `html` template is escaped, except values
 * that are already `SafeHtml` (the result of another `html` template, or of a renderer whose output
 * is escaped by construction and marked with `trustedHtml`). No page string is concatenated by hand.
 */
const SAFE: unique symbol = Symbol('SafeHtml');

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const isSafe = (v: unknown): v is SafeHtml => typeof v === 'object' && v !== null && SAFE in v;

/** Marks renderer output as HTML: only for renderers that escape their input themselves (markdown-it with html off, highlight.js). */
export function trustedHtml(value: string): SafeHtml {
  return { [SAFE]: true, value };
}

function render(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (isSafe(v)) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** The template tag: `html\`<a href="${url}">${name}</a>\`` escapes `url` and `name`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return trustedHtml(out);
}

/** Percent-encodes each segment of a repository path for a URL (slashes kept), so a file name never breaks out of its link. */
export function pathUrl(path: string): string {
  return path
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}
