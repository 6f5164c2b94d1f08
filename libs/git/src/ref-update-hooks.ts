import { randomBytes } from 'node:crypto';
import { chmod, mkdir, realpath, rename, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import { basename, dirname, join, resolve } from 'node:path';
import { isZeroSha } from './git-cli';
import type { ProposedRefUpdate, RefCommand, RefUpdateCheck } from './git-repositories';

/**
 * The `pre-receive` hook every push runs (git over HTTP and SSH alike): receive-pack has the pack in
 * its quarantine and the refs not yet moved. The hook hands the updates and where the quarantine is
 * to the Lode process that runs the push, over loopback TCP with that push's secret; Lode works out
 * which updates are forced (reading the quarantined objects with libgit2, in process) and answers
 * `ok`, or `refused` and the lines to show; git then moves no ref at all and the client reads the
 * lines as `remote: GitLab: ...`. bash alone: no interpreter and no git process to start per push.
 * If Lode cannot be reached the push is refused: nothing moves unchecked.
 */
const PRE_RECEIVE = `#!/bin/bash
# Lode's pre-receive hook (written by Lode at start; changes are overwritten).
if [ -z "$LODE_HOOK_PORT" ] || [ -z "$LODE_HOOK_SECRET" ]; then exit 0; fi
if ! exec 3<>"/dev/tcp/127.0.0.1/$LODE_HOOK_PORT"; then
  echo "GitLab: Lode could not check this push; try again." >&2
  exit 1
fi
printf '%s\\nquarantine=%s\\n' "$LODE_HOOK_SECRET" "$GIT_QUARANTINE_PATH" >&3
while read -r old new ref; do
  printf '%s %s %s\\n' "$old" "$new" "$ref" >&3
done
printf '\\n' >&3
IFS= read -r verdict <&3
while IFS= read -r line <&3; do printf '%s\\n' "$line" >&2; done
if [ "$verdict" = ok ]; then exit 0; fi
[ -n "$verdict" ] || echo "GitLab: Lode could not check this push; try again." >&2
exit 1
`;

/**
 * Whether each `[ancestor, descendant]` pair of commit-ish ids is an ancestor and its descendant (or
 * the same commit), reading the repository's objects (`objects`) and those of a push still in its
 * quarantine (`quarantine`, when git has one): what `git merge-base --is-ancestor` answers in the
 * hook. False where an object is missing or no commit.
 */
export type QuarantineAncestry = (
  objects: string,
  quarantine: string | undefined,
  pairs: readonly (readonly [string, string])[],
) => Promise<boolean[]>;

/** What one push's hook may send: a few ref updates, never megabytes. */
const MAX_REQUEST = 1024 * 1024;

/**
 * The checks of the pushes this process runs: each push registers its check and passes the
 * environment `register` answers to git (`core.hooksPath` pointing at Lode's hook, the loopback
 * port, the push's secret). The hook script is written into `<dataDir>/hooks` at first use, so the
 * hook git runs is always this release's.
 */
export class RefUpdateHooks {
  private listening?: { server: Server; port: number; hooksPath: string };
  private starting?: Promise<void>;
  private readonly logger = new Logger('Git');
  private readonly checks = new Map<string, { check: RefUpdateCheck; repositoryPath: string }>();

  constructor(
    private readonly dataDir: string,
    private readonly ancestry: QuarantineAncestry,
  ) {}

  /** Writes the hook and opens the loopback port; before the first push (the git module's start). */
  start(): Promise<void> {
    this.starting ??= (async () => {
      const hooksPath = await this.install();
      const server = createServer((socket) => this.serve(socket));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      // Never what keeps a stopping process alive.
      server.unref();
      this.listening = { server, port: (server.address() as { port: number }).port, hooksPath };
    })();
    return this.starting;
  }

  /**
   * The environment for one push's git process; `release` once git has exited. Synchronous, so a
   * transport can start git in the same tick it starts reading the request.
   */
  register(check: RefUpdateCheck, repositoryPath: string): { env: NodeJS.ProcessEnv; release: () => void } {
    if (!this.listening) throw new Error('RefUpdateHooks.start() has not completed');
    const secret = randomBytes(24).toString('hex');
    this.checks.set(secret, { check, repositoryPath });
    return {
      env: {
        // Command-line scope (git 2.31+): above any configuration inside the repository itself.
        GIT_CONFIG_COUNT: '3',
        GIT_CONFIG_KEY_0: 'core.hooksPath',
        GIT_CONFIG_VALUE_0: this.listening.hooksPath,
        // receive-pack's `git gc --auto` after every push (one more git process each) never finds
        // work here: Lode repacks a repository itself once its loose objects or packs pile up (the
        // push statistics' repack, far below gc's thresholds) and housekeeping runs `git gc`, as
        // GitLab runs its own housekeeping after pushes.
        GIT_CONFIG_KEY_1: 'receive.autogc',
        GIT_CONFIG_VALUE_1: 'false',
        // receive-pack's connectivity check (`rev-list --objects ... --not --all --alternate-refs`)
        // runs in the push's quarantine, where the repository's own object store is an alternate:
        // git starts a `for-each-ref` in the repository to list that alternate's refs, which are
        // the very refs `--all` already names. `true` lists none, and git execs it directly (no
        // shell, no git start-up).
        GIT_CONFIG_KEY_2: 'core.alternateRefsCommand',
        GIT_CONFIG_VALUE_2: 'true',
        LODE_HOOK_PORT: String(this.listening.port),
        LODE_HOOK_SECRET: secret,
      },
      release: () => void this.checks.delete(secret),
    };
  }

  async close(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    this.starting = undefined;
    if (listening) await new Promise((resolve) => listening.server.close(resolve));
  }

  private async install(): Promise<string> {
    const dir = join(this.dataDir, 'hooks');
    await mkdir(dir, { recursive: true });
    // Written aside and renamed in: a push running now never reads half a script.
    const tmp = join(dir, `.pre-receive-${randomBytes(4).toString('hex')}`);
    await writeFile(tmp, PRE_RECEIVE, { mode: 0o755 });
    await chmod(tmp, 0o755);
    await rename(tmp, join(dir, 'pre-receive'));
    return dir;
  }

  /** One hook's request: its secret, `quarantine=<path>`, `<old> <new> <ref>` lines, an empty line; then the verdict. */
  private serve(socket: Socket): void {
    let buffered = '';
    let answered = false;
    socket.setEncoding('latin1');
    socket.setTimeout(60_000, () => socket.destroy());
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      if (answered) return;
      buffered += chunk;
      if (buffered.length > MAX_REQUEST) return void socket.destroy();
      const end = buffered.indexOf('\n\n');
      if (end < 0) return;
      answered = true;
      const [secret, quarantineLine, ...lines] = buffered.slice(0, end).split('\n');
      const registered = this.checks.get(secret);
      const commands = lines.map(parseLine);
      // Fails closed: a request this process cannot read whole (a hook of another release, a line
      // cut short) is refused, never let through with fewer updates than git is about to apply.
      if (
        !registered ||
        !quarantineLine?.startsWith('quarantine=') ||
        !commands.length ||
        commands.some((c) => c === undefined)
      )
        return void socket.end('refused\nGitLab: Lode could not check this push; try again.\n');
      // `quarantine=` and nothing when git moves refs without a pack (deletions only).
      const quarantine = quarantineLine.slice('quarantine='.length);
      this.withForced(registered.repositoryPath, quarantine, commands as RefCommand[])
        .then((updates) => registered.check(updates))
        .then(
          (refusal) => socket.end(refusal === undefined ? 'ok\n' : `refused\n${refusalLines(refusal)}`),
          () => socket.end('refused\nGitLab: Lode could not check this push; try again.\n'),
        );
    });
  }

  /**
   * The updates with `forced` set: an update from one commit to another whose old one is not an
   * ancestor of the new (a creation or a deletion never is). The quarantine the hook names is used
   * only where it is receive-pack's own, inside the repository this push was registered for.
   */
  private async withForced(
    repositoryPath: string,
    quarantine: string,
    commands: RefCommand[],
  ): Promise<ProposedRefUpdate[]> {
    const objects = resolve(repositoryPath, 'objects');
    const own = quarantine === '' ? undefined : await this.ownQuarantine(objects, quarantine);
    const moves = commands.filter((c) => !isZeroSha(c.before) && !isZeroSha(c.after));
    const ancestors = moves.length
      ? await this.ancestry(
          objects,
          own,
          moves.map((c) => [c.before, c.after] as const),
        )
      : [];
    return commands.map((c) => {
      const i = moves.indexOf(c);
      return { ...c, forced: i >= 0 && !ancestors[i] };
    });
  }

  /**
   * The quarantine the hook named, when it is receive-pack's own inside `objects`; undefined (and a
   * warning) otherwise, when the pushed objects cannot be read and every update of one commit to
   * another counts as forced. git names it from the repository's real path (a hook runs in the
   * repository, `<repo>/./objects/tmp_objdir-incoming-...`), so both are compared as real paths: a
   * data directory reached through a symlink is the same directory.
   */
  private async ownQuarantine(objects: string, quarantine: string): Promise<string | undefined> {
    const [real, realObjects] = await Promise.all([
      realpath(resolve(dirname(objects), quarantine)).catch(() => undefined),
      realpath(objects).catch(() => undefined),
    ]);
    if (real && realObjects && dirname(real) === realObjects && QUARANTINE.test(basename(real))) return real;
    this.logger.warn(
      `a push named ${quarantine} as its quarantine, not one of ${objects}: its updates count as forced`,
    );
    return undefined;
  }
}

const LINE = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (refs\/\S+)$/;

function parseLine(line: string): RefCommand | undefined {
  const m = LINE.exec(line);
  return m ? { before: m[1], after: m[2], ref: m[3] } : undefined;
}

/** receive-pack's quarantine: one directory of its own inside the repository's object store. */
const QUARANTINE = /^tmp_objdir-incoming-[A-Za-z0-9]+$/;

/** gitlab-shell prefixes what its hooks say with `GitLab: `; each line of the refusal gets it. */
function refusalLines(refusal: string): string {
  return (
    refusal
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => `GitLab: ${l}\n`)
      .join('') || 'GitLab: The push was refused.\n'
  );
}
