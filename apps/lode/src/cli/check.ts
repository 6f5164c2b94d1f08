import { GitRepositories, projectRepo, repositoryPath } from '@app/git';
import { leftoverUploads, Outbox, ProjectionStatus } from '@app/platform';
import { PendingPushes, ProjectQueries, type ProjectSummary } from '@app/projects';
import type { Command } from 'commander';
import { EXIT, type ExitCode } from './exit-codes';
import type { LodeRun } from './lode-run';
import type { Lode } from './open-lode';
import { outboxTotals } from './outbox';
import { age, print, progress, secondsSince } from './output';

/** Outbox rows the relay has not taken for this long mean no relay runs, or the job queue is away. */
export const UNDISPATCHED_LIMIT_S = 300;
/** Jobs unfinished this long after their event (retries included) mean no worker takes them. */
export const UNFINISHED_LIMIT_S = 3600;
/** A temporary file or directory untouched this long was left by a process that died. */
export const LEFTOVER_AGE_MS = 3600_000;
/** Repositories checked by `git fsck` at once. */
const FSCK_CONCURRENCY = 2;
/** Lines of a failed `git fsck` shown per repository. */
const FSCK_LINES = 5;

/** What `check` prints: sections of lines, some of them problems (which make it exit 1). */
class Report {
  problems = 0;

  section(line: string): void {
    print(line);
  }

  problem(line: string): void {
    this.problems++;
    print(`  problem: ${line}`);
  }

  note(line: string): void {
    print(`  note: ${line}`);
  }
}

const named = (p: ProjectSummary) => `project ${p.id} (${p.fullPath})`;

/** Every project row has its repository on disk, and every repository on disk a project row. */
async function repositories(lode: Lode, report: Report): Promise<ProjectSummary[]> {
  const git = lode.app.get(GitRepositories);
  const projectQueries = lode.app.get(ProjectQueries);
  const projects = await projectQueries.everyProject();
  const present: ProjectSummary[] = [];
  const findings: (() => void)[] = [];
  for (const p of projects) {
    if (await git.exists(projectRepo(p.id))) {
      present.push(p);
      continue;
    }
    const where = repositoryPath(lode.config.dataDir, p.id);
    if (p.importStatus === 'scheduled' || p.importStatus === 'started')
      findings.push(() => report.note(`${named(p)}: no repository yet, its fork copy is ${p.importStatus}`));
    else if (p.importStatus === 'failed')
      findings.push(() => report.note(`${named(p)}: no repository, its fork copy failed`));
    else findings.push(() => report.problem(`${named(p)}: repository missing (${where})`));
  }
  const stray = await git.strayRepositories(
    projects.map((p) => p.id),
    await projectQueries.goneProjectIds(),
  );
  for (const s of stray)
    findings.push(() =>
      report.problem(
        `repository without a project: ${s.path}${s.projectId !== undefined ? ` (of deleted project ${s.projectId}; its removal job has not run)` : ''}`,
      ),
    );
  report.section(`repositories: ${projects.length} projects, ${present.length + stray.length} repositories on disk`);
  for (const f of findings) f();
  return present;
}

/** `git fsck` on every repository that has a project, a few at a time, with a progress bar on a terminal. */
async function fsck(lode: Lode, report: Report, projects: ProjectSummary[]): Promise<void> {
  const git = lode.app.get(GitRepositories);
  const bar = progress('git fsck', projects.length);
  const failures: { project: ProjectSummary; lines: string[] }[] = [];
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < projects.length) {
      const project = projects[next++];
      const lines = await git.fsck(projectRepo(project.id)).catch((err: unknown) => [String(err)]);
      if (lines.length) failures.push({ project, lines });
      bar.update(++done);
    }
  };
  await Promise.all(Array.from({ length: FSCK_CONCURRENCY }, worker));
  bar.stop();
  report.section(
    `git fsck: ${projects.length} repositories checked, ${failures.length ? `${failures.length} with problems` : 'all sound'}`,
  );
  for (const { project, lines } of failures.sort((a, b) => a.project.id - b.project.id))
    report.problem(
      `${named(project)}: ${lines.slice(0, FSCK_LINES).join(' | ')}${lines.length > FSCK_LINES ? ` (and ${lines.length - FSCK_LINES} more lines)` : ''}`,
    );
}

/** The outbox: nothing waiting on the relay or a worker for long, no job failed for good lately. */
async function outbox(lode: Lode, report: Report): Promise<void> {
  const t = outboxTotals(await lode.app.get(Outbox).status());
  report.section(
    `outbox: ${t.undispatched} undispatched (oldest ${age(t.oldestUndispatchedAge)}), ` +
      `${t.unfinished} dispatched and unfinished (oldest ${age(t.oldestUnfinishedAge)}), ` +
      `${t.failed} failed (${t.failedLastDay} in the last day)`,
  );
  if (t.oldestUndispatchedAge !== null && t.oldestUndispatchedAge > UNDISPATCHED_LIMIT_S)
    report.problem(
      `rows have waited ${age(t.oldestUndispatchedAge)} for the relay: is a worker running, and Redis answering?`,
    );
  if (t.oldestUnfinishedAge !== null && t.oldestUnfinishedAge > UNFINISHED_LIMIT_S)
    report.problem(`jobs have been unfinished for ${age(t.oldestUnfinishedAge)}: is a worker running?`);
  if (t.failedLastDay)
    report.problem(`${t.failedLastDay} job(s) failed for good in the last day: see \`lode jobs list\``);
}

/** Projections run in the appending transaction: the log's head and who follows it, for the record. */
async function projections(lode: Lode, report: Report): Promise<void> {
  const s = await lode.app.get(ProjectionStatus).report();
  const tables = new Set(s.projectors.flatMap((p) => p.tables)).size;
  report.section(
    `projections: ${s.projectors.length} projectors over ${tables} tables, applied in each event's transaction; ` +
      (s.lastPosition === null
        ? 'the event log is empty'
        : `the event log is at position ${s.lastPosition} (last event ${age(secondsSince(s.lastRecordedAt))} ago)`),
  );
}

/** Pushes git applied that no process recorded within LODE_PUSH_RECONCILE_AFTER. */
async function pendingPushes(lode: Lode, report: Report): Promise<void> {
  const after = lode.config.pushReconcileAfter;
  const overdue = await lode.app.get(PendingPushes).overdue(after * 1000);
  report.section(`pending pushes: ${overdue.count} older than LODE_PUSH_RECONCILE_AFTER (${after} s)`);
  if (overdue.count)
    report.problem(
      `${overdue.count} push(es) not recorded, the oldest written ${age(secondsSince(overdue.oldest))} ago: ` +
        'the reconciler runs in API processes; is one running?',
    );
}

/** What processes that died left half-written in the data directory. */
async function leftovers(lode: Lode, report: Report): Promise<void> {
  const found = [
    ...(await lode.app.get(GitRepositories).leftoverTemporaries(LEFTOVER_AGE_MS)),
    ...(await leftoverUploads(lode.config.dataDir, LEFTOVER_AGE_MS)),
  ].sort();
  report.section(`leftovers: ${found.length} temporary files or directories untouched for an hour`);
  for (const path of found) report.problem(`left behind: ${path}`);
}

async function check(lode: Lode): Promise<ExitCode> {
  const report = new Report();
  const present = await repositories(lode, report);
  await fsck(lode, report, present);
  await outbox(lode, report);
  await projections(lode, report);
  await pendingPushes(lode, report);
  await leftovers(lode, report);
  print(report.problems ? `check: ${report.problems} problem(s) found` : 'check: no problems found');
  return report.problems ? EXIT.failed : EXIT.ok;
}

/** `check`: the installation's consistency, read-only. */
export function registerCheckCommand(program: Command, run: LodeRun): void {
  program
    .command('check')
    .description(
      'check the repositories against the projects (and git fsck each), the outbox, pending pushes and leftovers; ' +
        'change nothing; exit 1 when anything is wrong',
    )
    .action(run.withLode(check));
}
