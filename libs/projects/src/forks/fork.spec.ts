import { AT, EARLIER, given, ID, NOW, NS, OWNER, settings } from '../projects/project-decider.fixtures';
import type { ProjectEvent } from '../projects/project';
import { recordImportStatus } from './fork';

describe("a fork's import", () => {
  const forked = (defaultBranch: string | null): ProjectEvent => ({
    type: 'ProjectForked',
    data: {
      projectId: ID,
      namespaceId: NS,
      ...settings({ defaultBranch }),
      creatorId: OWNER,
      runnersToken: 'secret',
      forkedFromId: 1,
      at: EARLIER,
    },
  });
  const status = (s: 'started' | 'finished' | 'failed'): ProjectEvent => ({
    type: 'ProjectImportStatusChanged',
    data: { projectId: ID, status: s, error: null, at: AT },
  });
  const protectedMain: ProjectEvent = {
    type: 'ProtectedBranchCreated',
    data: { projectId: ID, name: 'main', pushAccessLevel: 40, mergeAccessLevel: 40, at: AT },
  };

  it('protects the default branch when the copy is finished (GitLab 10.x after_create_default_branch)', () => {
    const s = given(forked('main'), status('started'));
    expect(recordImportStatus(s, 'finished', null, NOW, undefined, 2)).toEqual([status('finished'), protectedMain]);
  });

  it('protects nothing while started or failed, with no default branch, or with the setting at 0', () => {
    expect(recordImportStatus(given(forked('main')), 'started', null, NOW, undefined, 2)).toEqual([status('started')]);
    const started = given(forked('main'), status('started'));
    expect(recordImportStatus(started, 'failed', 'boom', NOW, undefined, 2)).toEqual([
      { ...status('failed'), data: { ...status('failed').data, error: 'boom' } },
    ]);
    expect(recordImportStatus(started, 'finished', null, NOW, undefined, 0)).toEqual([status('finished')]);
    const empty = given(forked(null), status('started'));
    expect(recordImportStatus(empty, 'finished', null, NOW, undefined, 2)).toEqual([status('finished')]);
  });

  it('adds no second rule where one covers the branch, and nothing for a report repeated', () => {
    const wildcard: ProjectEvent = {
      type: 'ProtectedBranchCreated',
      data: { projectId: ID, name: 'ma*', pushAccessLevel: 30, mergeAccessLevel: 30, at: AT },
    };
    const s = given(forked('main'), wildcard, status('started'));
    expect(recordImportStatus(s, 'finished', null, NOW, undefined, 2)).toEqual([status('finished')]);
    const done = given(forked('main'), status('started'), status('finished'), protectedMain);
    expect(recordImportStatus(done, 'finished', null, NOW, undefined, 2)).toEqual([]);
  });
});
