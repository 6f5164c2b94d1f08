import { parseGitSshCommand } from './ssh-command';

describe('parseGitSshCommand', () => {
  it.each([
    ["git-upload-pack '/group/project.git'", 'git-upload-pack', 'group/project'],
    ["git-upload-pack 'group/sub/project.git'", 'git-upload-pack', 'group/sub/project'],
    ["git-receive-pack 'alice/repo'", 'git-receive-pack', 'alice/repo'],
    ["git-upload-archive '/alice/repo.git'", 'git-upload-archive', 'alice/repo'],
    ["git upload-pack '/alice/repo.git'", 'git-upload-pack', 'alice/repo'],
    ['git-upload-pack alice/repo.git', 'git-upload-pack', 'alice/repo'],
    ['git-upload-pack "alice/repo.git/"', 'git-upload-pack', 'alice/repo'],
    // git's sq_quote of a path with a quote in it
    ["git-upload-pack 'alice/it'\\''s.git'", 'git-upload-pack', "alice/it's"],
  ])('reads %s', (line, service, fullPath) => {
    expect(parseGitSshCommand(line)).toEqual({ service, fullPath });
  });

  it.each([
    ['', 'nothing'],
    ['ls -la', 'another command'],
    ["git-upload-pack 'a/b.git' extra", 'a third word'],
    ["git-upload-pack 'a/b.git'; rm -rf /", 'a second command (it is only words here, and too many)'],
    ["git-upload-pack 'a/b.git", 'an unterminated quote'],
    ["git-upload-pack '../../etc/passwd'", 'a path that climbs'],
    ["git-upload-pack '/'", 'an empty path'],
    ["git-upload-pack 'a/\u0000b'", 'a NUL'],
    ["git-upload-pack 'a/b'\nid", 'a new line'],
    ['git-upload-pack', 'no path'],
    ['git status', 'another git command'],
    ['git-shell', 'a shell'],
    ["constructor 'a/b'", 'an object property name'],
  ])('refuses %j (%s)', (line) => {
    expect(parseGitSshCommand(line)).toBeUndefined();
  });

  it('refuses a command line longer than any path', () => {
    expect(parseGitSshCommand(`git-upload-pack '${'a/'.repeat(3000)}b'`)).toBeUndefined();
  });
});
