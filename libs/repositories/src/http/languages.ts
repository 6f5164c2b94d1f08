import type { SizedFile } from '@app/git';

/*
 * GitLab's language statistics (`GET /projects/:id/languages`), as linguist weighs them: the bytes of
 * each language's files on the default branch, as a share of all counted bytes. Lode names the language
 * by the file's extension (or its whole name), linguist's first strategy; files linguist leaves out are
 * left out here too: vendored and generated ones, documentation, and prose and data (Markdown, JSON, ...),
 * which linguist does not count in a repository's languages.
 */

/** Extensions (lower case, without the dot) and whole file names to linguist's language names. */
const BY_EXTENSION: Record<string, string> = {
  c: 'C',
  h: 'C',
  cc: 'C++',
  cpp: 'C++',
  cxx: 'C++',
  hpp: 'C++',
  hh: 'C++',
  cs: 'C#',
  clj: 'Clojure',
  coffee: 'CoffeeScript',
  css: 'CSS',
  scss: 'SCSS',
  sass: 'Sass',
  less: 'Less',
  dart: 'Dart',
  ex: 'Elixir',
  exs: 'Elixir',
  erl: 'Erlang',
  go: 'Go',
  groovy: 'Groovy',
  hs: 'Haskell',
  html: 'HTML',
  htm: 'HTML',
  java: 'Java',
  js: 'JavaScript',
  mjs: 'JavaScript',
  cjs: 'JavaScript',
  jsx: 'JavaScript',
  kt: 'Kotlin',
  kts: 'Kotlin',
  lua: 'Lua',
  m: 'Objective-C',
  mm: 'Objective-C++',
  ml: 'OCaml',
  php: 'PHP',
  pl: 'Perl',
  pm: 'Perl',
  ps1: 'PowerShell',
  py: 'Python',
  r: 'R',
  rb: 'Ruby',
  rake: 'Ruby',
  rs: 'Rust',
  scala: 'Scala',
  sh: 'Shell',
  bash: 'Shell',
  zsh: 'Shell',
  sql: 'PLpgSQL',
  swift: 'Swift',
  tf: 'HCL',
  hcl: 'HCL',
  ts: 'TypeScript',
  tsx: 'TypeScript',
  mts: 'TypeScript',
  cts: 'TypeScript',
  vue: 'Vue',
  svelte: 'Svelte',
  haml: 'Haml',
  erb: 'HTML+ERB',
  vim: 'Vim script',
  el: 'Emacs Lisp',
  f90: 'Fortran',
  jl: 'Julia',
  nix: 'Nix',
  zig: 'Zig',
  makefile: 'Makefile',
  mk: 'Makefile',
  dockerfile: 'Dockerfile',
  gemfile: 'Ruby',
  rakefile: 'Ruby',
  cmake: 'CMake',
};

/** Paths linguist calls vendored, generated or documentation (its vendor.yml and documentation.yml, in short). */
const LEFT_OUT = [
  /(^|\/)(node_modules|vendor|bower_components|third[-_]?party|Godeps|dist|build)\//i,
  /(^|\/)(docs?|Documentation|examples?)\//i,
  /\.min\.(js|css)$/i,
  /(^|\/)(package-lock\.json|yarn\.lock|Gemfile\.lock|Cargo\.lock|go\.sum)$/i,
];

/** The language of a path, or undefined when linguist would not count it. */
export function languageOf(path: string): string | undefined {
  if (LEFT_OUT.some((r) => r.test(path))) return undefined;
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = name.lastIndexOf('.');
  return BY_EXTENSION[name] ?? (dot > 0 ? BY_EXTENSION[name.slice(dot + 1)] : undefined);
}

/**
 * Each language's share of the counted bytes in percent, rounded to two decimals, largest first (GitLab:
 * `{"Ruby": 66.69, "JavaScript": 22.98}`); `{}` when nothing counts.
 */
export function languageShares(files: readonly SizedFile[]): Record<string, number> {
  const bytes = new Map<string, number>();
  let total = 0;
  for (const f of files) {
    const language = languageOf(f.path);
    if (!language || !(f.size > 0)) continue;
    bytes.set(language, (bytes.get(language) ?? 0) + f.size);
    total += f.size;
  }
  const shares = [...bytes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return Object.fromEntries(shares.map(([language, n]) => [language, Math.round((n / total) * 10000) / 100]));
}
