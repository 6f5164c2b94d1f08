import { loadPackage } from '@app/platform';
import type { HLJSApi } from 'highlight.js';
import { escapeHtml, trustedHtml, type SafeHtml } from './html';

let loaded: HLJSApi | undefined;
/**
 * highlight.js, loaded by the first page that shows a file: with its 190 languages it is some 5 MB of
 * the heap, which an API process that serves no page never needs (issue 23's memory target).
 */
function hljs(): HLJSApi {
  loaded ??= loadPackage<HLJSApi>('highlight.js');
  return loaded;
}

/** Past this size a file shows as plain text: highlighting costs time linear in its length, for little use. */
const MAX_HIGHLIGHT = 256 * 1024;

/** File names highlight.js knows by name rather than by extension. */
const BY_NAME: Record<string, string> = {
  dockerfile: 'dockerfile',
  makefile: 'makefile',
  gemfile: 'ruby',
  rakefile: 'ruby',
  'cmakelists.txt': 'cmake',
};

/** The highlight.js language for a file name, or undefined (shown as plain, escaped text). */
export function languageOf(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (BY_NAME[lower]) return BY_NAME[lower];
  const dot = lower.lastIndexOf('.');
  if (dot < 0) return undefined;
  const ext = lower.slice(dot + 1);
  return hljs().getLanguage(ext) ? ext : undefined;
}

/**
 * A file's text as HTML: highlight.js escapes the text it wraps in its spans, so its output carries no
 * markup from the file; files of an unknown language or too large are escaped whole.
 */
export function highlight(text: string, name: string): SafeHtml {
  const language = text.length <= MAX_HIGHLIGHT ? languageOf(name) : undefined;
  if (!language) return trustedHtml(escapeHtml(text));
  return trustedHtml(hljs().highlight(text, { language, ignoreIllegals: true }).value);
}
