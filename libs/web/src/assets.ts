import { createHash } from 'node:crypto';

/**
 * The pages' one stylesheet and one script, served by Lode itself under `/-/assets/` with a content
 * hash in the name, so they can be cached for a year and a new release is fetched at once. They live
 * in code, not in files, so the build has nothing to copy.
 */
const STYLE = `
:root { --fg: #1f1f24; --muted: #5c5c66; --line: #dcdcde; --bg: #fff; --soft: #f6f6f8; --link: #1f5fbf; --add: #e6f4ea; --del: #fdecea; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
:focus-visible { outline: 2px solid var(--link); outline-offset: 2px; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .5rem 1rem; background: #292961; color: #fff; }
header.top a { color: #fff; }
header.top .brand { font-weight: 700; font-size: 1.1rem; margin-right: auto; }
header.top form { margin: 0; display: inline; }
header.top button { background: none; border: 1px solid #fff8; color: #fff; border-radius: 4px; padding: .15rem .6rem; font: inherit; cursor: pointer; }
main { max-width: 70rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 .5rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 1.25rem 0 .5rem; }
.muted { color: var(--muted); }
.crumbs { margin: 0 0 .5rem; color: var(--muted); overflow-wrap: anywhere; }
nav.tabs { display: flex; flex-wrap: wrap; gap: .25rem 1rem; border-bottom: 1px solid var(--line); margin: .5rem 0 1rem; padding-bottom: .25rem; }
nav.tabs a[aria-current] { font-weight: 700; color: var(--fg); }
ul.list { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 6px; }
ul.list li { padding: .5rem .75rem; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
ul.list li:first-child { border-top: 0; }
ul.list .meta { display: block; font-size: .85rem; color: var(--muted); }
.badge { display: inline-block; font-size: .75rem; border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; color: var(--muted); vertical-align: middle; }
table.tree { width: 100%; border-collapse: collapse; border: 1px solid var(--line); }
table.tree td { padding: .3rem .6rem; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
table.tree td.kind { width: 2.5rem; color: var(--muted); font-size: .8rem; }
.clone { display: grid; gap: .4rem; margin: .75rem 0; }
.clone label { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; }
.clone span { min-width: 3rem; font-weight: 600; }
.clone input { flex: 1 1 14rem; min-width: 0; font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; padding: .3rem .4rem; border: 1px solid var(--line); border-radius: 4px; }
button.copy, .btn { font: inherit; font-size: .85rem; padding: .25rem .6rem; border: 1px solid var(--line); border-radius: 4px; background: var(--soft); color: var(--fg); cursor: pointer; }
pre, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background: var(--soft); padding: .75rem; overflow-x: auto; border-radius: 6px; }
.blob { border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.blob .bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .4rem .75rem; background: var(--soft); border-bottom: 1px solid var(--line); font-size: .9rem; }
.blob pre { margin: 0; border-radius: 0; background: var(--bg); }
.blob img { display: block; max-width: 100%; margin: 1rem auto; }
.readme { border: 1px solid var(--line); border-radius: 6px; padding: .5rem 1rem; overflow-wrap: anywhere; }
.readme img { max-width: 100%; }
.readme table { border-collapse: collapse; display: block; overflow-x: auto; }
.readme th, .readme td { border: 1px solid var(--line); padding: .25rem .5rem; }
.diff { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; overflow: hidden; }
.diff h3 { margin: 0; padding: .4rem .75rem; font-size: .9rem; background: var(--soft); border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.diff pre { margin: 0; border-radius: 0; background: var(--bg); padding: 0; display: grid; }
.diff pre span { display: block; padding: 0 .75rem; }
.diff .add { background: var(--add); }
.diff .del { background: var(--del); }
.diff .hunk { color: var(--muted); background: var(--soft); }
form.search { display: flex; gap: .4rem; margin: .5rem 0 1rem; }
form.search input { flex: 1; min-width: 0; font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 4px; }
form.signin { display: grid; gap: .6rem; max-width: 24rem; }
form.signin input { font: inherit; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 4px; }
.error { color: #a4161a; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
footer { max-width: 70rem; margin: 2rem auto 1rem; padding: 0 1rem; font-size: .85rem; color: var(--muted); }
.hljs-comment, .hljs-quote { color: #6a737d; }
.hljs-keyword, .hljs-selector-tag, .hljs-type, .hljs-meta .hljs-keyword { color: #c3156b; }
.hljs-string, .hljs-attr, .hljs-regexp, .hljs-addition { color: #0a6a32; }
.hljs-number, .hljs-literal, .hljs-symbol, .hljs-bullet { color: #005cc5; }
.hljs-title, .hljs-section, .hljs-name, .hljs-selector-id, .hljs-selector-class { color: #6f42c1; }
.hljs-built_in, .hljs-variable, .hljs-template-variable, .hljs-attribute { color: #b35900; }
.hljs-deletion { color: #b31d28; }
@media (max-width: 40rem) {
  main { padding: .75rem; }
  h1 { font-size: 1.25rem; }
  table.tree td.kind { display: none; }
}
`;

/** Shows the copy buttons (hidden until this runs, so a page without script shows none) and copies the field next to each. */
const SCRIPT = `'use strict';
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  var field = document.getElementById(button.getAttribute('data-copy'));
  if (!field || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    navigator.clipboard.writeText(field.value).then(function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = 'Copy'; }, 1500);
    });
  });
});
`;

export interface Asset {
  path: string;
  type: string;
  body: Buffer;
}

function asset(name: string, ext: string, type: string, text: string): Asset {
  const body = Buffer.from(text, 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/-/assets/${name}-${hash}.${ext}`, type, body };
}

export const STYLESHEET = asset('lode', 'css', 'text/css; charset=utf-8', STYLE);
export const COPY_SCRIPT = asset('copy', 'js', 'text/javascript; charset=utf-8', SCRIPT);
export const ASSETS = new Map([STYLESHEET, COPY_SCRIPT].map((a) => [a.path, a]));
