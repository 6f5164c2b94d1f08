import type { ChildProcess } from 'node:child_process';

/*
 * What the git port's processes are doing, for the metrics (platform's `Metrics` reads these at
 * scrape time, through GitMetrics): only libs/git starts processes, so only it can count them.
 */
let running = 0;
let commandsRunning = 0;
let catFileProcesses = 0;
let archivesStarted = 0;

/** Counts `child` as running until it exits (or fails to start). */
export function trackProcess<C extends ChildProcess>(child: C): C {
  running++;
  let counted = true;
  const gone = () => {
    if (!counted) return;
    counted = false;
    running--;
  };
  child.once('exit', gone);
  child.once('error', gone);
  return child;
}

/** A command sent to the helper process (`runCommand`): a git process running there, until it answers. */
export function commandStarted(): () => void {
  commandsRunning++;
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    commandsRunning--;
  };
}

/** A `git archive` was started (the single flight's test and the metrics count them). */
export function archiveStarted(): void {
  archivesStarted++;
}

/** A long-lived `git cat-file --batch-command` joined (+1) or left (-1) the pool. */
export function catFilePoolChanged(by: 1 | -1): void {
  catFileProcesses += by;
}

/** The small interface the metrics read. */
export const GitProcessGauges = {
  /** git (and helper) processes started by this process that have not exited, plus commands the helper runs. */
  processesRunning: (): number => running + commandsRunning,
  /** Long-lived cat-file processes in the pool. */
  catFilePoolSize: (): number => catFileProcesses,
  /** `git archive` processes started since the process began. */
  archivesStarted: (): number => archivesStarted,
};
