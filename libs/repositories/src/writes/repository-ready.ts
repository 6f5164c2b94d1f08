import { Conflict } from '@app/platform';
import { ProjectChangeNotices, ProjectQueries, type ProjectRow } from '@app/projects';

/**
 * How long a write or a git transfer waits for a fork's copy to finish before it is refused. The copy
 * is a job (`fork-repository`) that hard-links the source's objects: well under a second for most
 * repositories, so a script that forks and then writes at once mostly just waits.
 */
export const FORK_COPY_WAIT_MS = 5_000;
/**
 * How often a waiting request reads the project again with no notice heard: a fallback only, since the
 * copy's recorded end is announced to every process (a NOTIFY lost with its connection wakes everyone).
 */
const FORK_COPY_RECHECK_MS = 1_000;

/** GitLab's words (`Gitlab::GitAccess`, `no_repo`) for a project whose repository is not there yet. */
export const NO_REPOSITORY = 'A repository for this project does not exist yet.';

/** A fork's copy scheduled or under way: its repository is not there yet. */
const COPYING: ReadonlySet<string> = new Set(['scheduled', 'started']);

/**
 * Whether the project's repository is there to write to or serve. At once from the row in hand for a
 * project never forked or whose copy finished; for a copy under way, once the job records it finished
 * (waited for up to FORK_COPY_WAIT_MS): the protection of the fork's default branch comes in the same
 * events, so no write slips in between the copy landing and its rules. False for a copy that failed
 * (it will not come) or takes longer, and for a project deleted meanwhile.
 */
export async function repositoryReady(
  projects: ProjectQueries,
  notices: ProjectChangeNotices,
  project: Pick<ProjectRow, 'id' | 'import_status'>,
  waitMs = FORK_COPY_WAIT_MS,
): Promise<boolean> {
  let status = project.import_status;
  const deadline = Date.now() + waitMs;
  while (COPYING.has(status)) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    // Listening before reading: an end recorded between the read and the wait is still heard. The
    // database is read once per notice about the project (or per recheck), not polled: a queue that
    // never runs the copy costs a waiting request five reads (one a second), not fifty.
    const lastWindow = left <= FORK_COPY_RECHECK_MS;
    const notice = notices.wait(project.id, Math.min(left, FORK_COPY_RECHECK_MS));
    try {
      status = (await projects.findForSystem(project.id))?.import_status ?? 'failed';
    } catch (err) {
      notice.cancel();
      throw err;
    }
    if (!COPYING.has(status)) {
      notice.cancel();
      break;
    }
    // The deadline's own timer ends the wait: a timer may fire a millisecond before Date.now() reaches
    // the deadline, which must not buy one more read.
    if (!(await notice.heard) && lastWindow) return false;
  }
  return status !== 'failed';
}

/**
 * A write to a project whose repository is not there yet: 409, the write conflicting with the
 * project's state (reads meanwhile see an empty repository, as GitLab's do while it imports).
 */
export class RepositoryNotThereYet extends Conflict {
  constructor() {
    super(NO_REPOSITORY);
  }
}
