import MarkdownIt from 'markdown-it';
import { pathUrl, trustedHtml, type SafeHtml } from './html';

/** Where a rendered README's relative links and images point: its project, ref and directory. */
export interface MarkdownBase {
  /** `/<project full path>`, already safe for a URL. */
  project: string;
  ref: string;
  /** The directory the Markdown file lives in ('' at the root). */
  dir: string;
}

/** Only these schemes may be linked; anything else (javascript:, data:, vbscript:, file:) renders as text. */
const SAFE_SCHEME = /^(https?:|mailto:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Markdown through markdown-it with raw HTML off (written HTML shows as text, escaped by markdown-it),
 * links limited to http(s), mailto and relative ones, and relative links and images resolved to the
 * project's blob and raw pages at the same ref.
 */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

md.validateLink = (url: string): boolean => {
  const u = url.trim();
  // Control characters and backslashes are how browsers are tricked into reading `java\tscript:`.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(u)) return false;
  return !HAS_SCHEME.test(u) || SAFE_SCHEME.test(u);
};

/** `a/../b` within the repository; undefined when it climbs out of the root. */
function normalize(path: string): string | undefined {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!out.length) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

function resolveRelative(url: string, base: MarkdownBase | undefined, kind: 'blob' | 'raw'): string {
  if (!base || HAS_SCHEME.test(url) || url.startsWith('#') || url.startsWith('//')) return url;
  if (url.startsWith('/')) return url;
  const [pathPart, ...rest] = url.split(/(?=[?#])/);
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathPart);
  } catch {
    return url;
  }
  const path = normalize(base.dir ? `${base.dir}/${decoded}` : decoded);
  if (path === undefined) return url;
  return `${base.project}/-/${kind}/${pathUrl(base.ref)}/${pathUrl(path)}${rest.join('')}`;
}

const defaultLink =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
/** markdown-it's `env` is untyped; ours carries the base of relative links. */
const baseOf = (env: unknown): MarkdownBase | undefined => (env as { base?: MarkdownBase } | undefined)?.base;
const attr = (v: string | number | null): string | null => (v === null ? null : String(v));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const href = attr(token.attrGet('href'));
  if (href !== null) token.attrSet('href', resolveRelative(href, baseOf(env), 'blob'));
  if (href !== null && /^https?:/i.test(href)) token.attrSet('rel', 'nofollow noreferrer noopener');
  return defaultLink(tokens, idx, options, env, self);
};
const defaultImage = md.renderer.rules.image!;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const src = attr(token.attrGet('src'));
  // Images load only from Lode (the pages' img-src is 'self'); a remote one would not show anyway.
  if (src !== null) token.attrSet('src', resolveRelative(src, baseOf(env), 'raw'));
  return defaultImage(tokens, idx, options, env, self);
};

/** Renders Markdown to HTML that cannot carry markup of its own (see `md`). */
export function renderMarkdown(source: string, base?: MarkdownBase): SafeHtml {
  return trustedHtml(md.render(source, { base }));
}
