import type { GitPackService } from '@app/git';

/** A git command a client may `exec` over SSH: the service and the project's full path. */
export interface GitSshCommand {
  service: GitPackService;
  /** The project's full path: no leading `/`, no trailing `.git`. */
  fullPath: string;
}

const SERVICES: Record<string, GitPackService> = {
  'git-upload-pack': 'git-upload-pack',
  'git-receive-pack': 'git-receive-pack',
  'git-upload-archive': 'git-upload-archive',
};

/** The longest command line taken: a project's full path is far shorter. */
const MAX_COMMAND = 4096;

/**
 * Reads the command line an SSH client asked to run (`git-upload-pack '/group/project.git'`, as git
 * quotes it, or the `git upload-pack ...` spelling), as gitlab-shell does with Shellwords: words in
 * single or double quotes or with backslash escapes, nothing else. Undefined for anything that is not
 * exactly one of the git services and one path: no shell ever sees the line.
 */
export function parseGitSshCommand(line: string): GitSshCommand | undefined {
  // eslint-disable-next-line no-control-regex -- exactly what is refused
  if (line.length > MAX_COMMAND || /[\x00-\x08\x0a-\x1f\x7f]/.test(line)) return undefined;
  const words = shellWords(line);
  if (!words) return undefined;
  if (words[0] === 'git' && words.length === 3) words.splice(0, 2, `git-${words[1]}`);
  if (words.length !== 2) return undefined;
  const service = Object.hasOwn(SERVICES, words[0]) ? SERVICES[words[0]] : undefined;
  if (!service) return undefined;
  const fullPath = words[1]
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  // A path that climbs, or names nothing, is no project's (the lookup would only miss, but say so early).
  if (!fullPath || fullPath.split('/').some((part) => part === '' || part === '.' || part === '..')) return undefined;
  return { service, fullPath };
}

/** POSIX shell word splitting without expansions; undefined for an unterminated quote. */
function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '$`"\\\n'.includes(line[j + 1])) j++;
        text += line[j];
      }
      if (j >= line.length) return undefined;
      word = (word ?? '') + text;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return undefined;
      word = (word ?? '') + line[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words.length ? words : undefined;
}
