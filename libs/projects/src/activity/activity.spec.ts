import { commitTitle, pushEntry } from './activity';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const ZERO = '0'.repeat(40);
const commit = (message: string) => ({
  id: B,
  message,
  timestamp: '2026-01-01T00:00:00+00:00',
  author: { name: 'A', email: 'a@example.com' },
  added: [],
  modified: [],
  removed: [],
});
const update = (ref: string, before: string, after: string, messages: string[] = [], total = messages.length) => ({
  ref,
  before,
  after,
  checkoutSha: after === ZERO ? null : after,
  commits: messages.map(commit),
  totalCommitsCount: total,
  message: null,
});

describe("a push's events (GitLab 10.x EventCreateService#push and PushEventPayloadService)", () => {
  it('names a new branch "pushed new", with no commit_from and the newest commit\'s title', () => {
    expect(pushEntry(update('refs/heads/main', ZERO, B, ['older', 'Newest\n\nbody'], 25))).toEqual({
      action: 'pushed',
      actionName: 'pushed new',
      pushData: {
        commit_count: 25,
        action: 'created',
        ref_type: 'branch',
        commit_from: null,
        commit_to: B,
        ref: 'main',
        commit_title: 'Newest',
      },
    });
  });

  it('names an update "pushed to" and a deletion "deleted" (no commit_to, no commits)', () => {
    expect(pushEntry(update('refs/heads/feature/x', A, B, ['one']))).toMatchObject({
      actionName: 'pushed to',
      pushData: { action: 'pushed', commit_from: A, commit_to: B, ref: 'feature/x', commit_count: 1 },
    });
    expect(pushEntry(update('refs/heads/gone', A, ZERO))).toEqual({
      action: 'pushed',
      actionName: 'deleted',
      pushData: {
        commit_count: 0,
        action: 'removed',
        ref_type: 'branch',
        commit_from: A,
        commit_to: null,
        ref: 'gone',
        commit_title: null,
      },
    });
  });

  it('records tags as ref_type tag and ignores refs that are neither branches nor tags', () => {
    expect(pushEntry(update('refs/tags/v1.0', ZERO, B, ['tagged']))).toMatchObject({
      actionName: 'pushed new',
      pushData: { ref_type: 'tag', ref: 'v1.0', action: 'created' },
    });
    expect(pushEntry(update('refs/notes/commits', A, B))).toBeNull();
  });

  it("keeps a commit's first line, cut to 70 characters as Rails' truncate does", () => {
    expect(commitTitle(undefined)).toBeNull();
    expect(commitTitle('  padded title  \r\nrest')).toBe('padded title');
    expect(commitTitle('x'.repeat(70))).toBe('x'.repeat(70));
    expect(commitTitle('x'.repeat(71))).toBe(`${'x'.repeat(67)}...`);
  });
});
