import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { ProposedRefUpdate, RefUpdateCheck } from './git-repositories';

/**
 * The `pre-receive` hook every push runs (git over HTTP and SSH alike): receive-pack has the pack in
 * its quarantine and the refs not yet moved. For each update it works out, with the quarantined
 * objects it alone can see, whether the update is a force push (the old tip not an ancestor of the
 * new), then asks the Lode process that runs the push, over loopback TCP with that push's secret.
 * Lode answers `ok`, or `refused` and the lines to show; git then moves no ref at all and the
 * client reads the lines as `remote: GitLab: ...`. bash and git only: no interpreter to start per push.
 * If Lode cannot be reached the push is refused: nothing moves unchecked.
 */
const PRE_RECEIVE = `#!/bin/bash
# Lode's pre-receive hook (written by Lode at start; changes are overwritten).
if [ -z "$LODE_HOOK_PORT" ] || [ -z "$LODE_HOOK_SECRET" ]; then exit 0; fi
if ! exec 3<>"/dev/tcp/127.0.0.1/$LODE_HOOK_PORT"; then
  echo "GitLab: Lode could not check this push; try again." >&2
  exit 1
fi
printf '%s\\n' "$LODE_HOOK_SECRET" >&3
while read -r old new ref; do
  forced=0
  if [ -n "\${old//0/}" ] && [ -n "\${new//0/}" ]; then
    git merge-base --is-ancestor "$old" "$new" 2>/dev/null || forced=1
  fi
  printf '%s %s %s %s\\n' "$old" "$new" "$ref" "$forced" >&3
done
printf '\\n' >&3
IFS= read -r verdict <&3
while IFS= read -r line <&3; do printf '%s\\n' "$line" >&2; done
if [ "$verdict" = ok ]; then exit 0; fi
[ -n "$verdict" ] || echo "GitLab: Lode could not check this push; try again." >&2
exit 1
`;

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
  private readonly checks = new Map<string, RefUpdateCheck>();

  constructor(private readonly dataDir: string) {}

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
  register(check: RefUpdateCheck): { env: NodeJS.ProcessEnv; release: () => void } {
    if (!this.listening) throw new Error('RefUpdateHooks.start() has not completed');
    const secret = randomBytes(24).toString('hex');
    this.checks.set(secret, check);
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

  /** One hook's request: its secret, `<old> <new> <ref> <forced>` lines, an empty line; then the verdict. */
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
      const [secret, ...lines] = buffered.slice(0, end).split('\n');
      const check = this.checks.get(secret);
      if (!check) return void socket.end('refused\nGitLab: Lode could not check this push; try again.\n');
      const updates = lines.map(parseLine).filter((u): u is ProposedRefUpdate => u !== undefined);
      check(updates).then(
        (refusal) => socket.end(refusal === undefined ? 'ok\n' : `refused\n${refusalLines(refusal)}`),
        () => socket.end('refused\nGitLab: Lode could not check this push; try again.\n'),
      );
    });
  }
}

const LINE = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (refs\/\S+) ([01])$/;

function parseLine(line: string): ProposedRefUpdate | undefined {
  const m = LINE.exec(line);
  return m ? { before: m[1], after: m[2], ref: m[3], forced: m[4] === '1' } : undefined;
}

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
