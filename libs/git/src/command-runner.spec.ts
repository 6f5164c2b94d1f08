import { CommandFailed, runCommand, stopCommandRunner } from './command-runner';

/** The helper's pid: the parent of the commands it runs. (Jest gives each test file its own registry, so one helper per file.) */
const helperPid = async () => Number((await runCommand('sh', ['-c', 'echo $PPID'])).stdout.toString().trim());
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('runCommand (short commands from a small helper process)', () => {
  afterAll(() => stopCommandRunner());

  it('answers the output of many concurrent commands, each its own, as bytes', async () => {
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => runCommand('sh', ['-c', `printf 'run %s %s\\000' ${i} $PPID`])),
    );
    const helper = await helperPid();
    expect(helper).not.toBe(process.pid);
    results.forEach((r, i) => {
      expect(r.code).toBe(0);
      expect(r.stdout.equals(Buffer.from(`run ${i} ${helper}\0`))).toBe(true);
    });
  });

  it('runs in the given directory and rejects a failed command with its status and standard error', async () => {
    expect((await runCommand('pwd', [], '/tmp')).stdout.toString().trim()).toBe('/tmp');
    const failed = await runCommand('sh', ['-c', 'echo nope >&2; exit 3']).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CommandFailed);
    expect((failed as CommandFailed).result.code).toBe(3);
    expect((failed as CommandFailed).message).toMatch(/nope/);
    const missing = await runCommand('no-such-command-here', []).catch((e: unknown) => e);
    expect((missing as Error).message).toMatch(/ENOENT/);
  });

  it('fails the calls under way when the helper dies, and starts another for the next call', async () => {
    const pid = await helperPid();
    const running = runCommand('sleep', ['5']);
    process.kill(pid, 'SIGKILL');
    await expect(running).rejects.toThrow(/helper exited/);
    expect((await runCommand('echo', ['again'])).stdout.toString()).toBe('again\n');
    expect(await helperPid()).not.toBe(pid);
    expect(alive(pid)).toBe(false);
  });
});
