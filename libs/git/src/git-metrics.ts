import { Metrics } from '@app/platform';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { GitProcessGauges } from './process-gauges';
import { GitRepositories } from './git-repositories';
import { GIT_WORK_KINDS, GitWorkBudget, type GitWorkLaneStats } from './work-budget';

/** Registers the git port's gauges with the process's metrics (read at scrape time). */
@Injectable()
export class GitMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly budget: GitWorkBudget,
    private readonly git: GitRepositories,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'lode_git_processes_running',
      'git processes this process started (and commands its helper runs) that have not exited',
      GitProcessGauges.processesRunning,
    );
    this.metrics.gauge(
      'lode_git_cat_file_pool_size',
      'Long-lived git cat-file processes in the pool',
      GitProcessGauges.catFilePoolSize,
    );
    this.metrics.gauge(
      'lode_git_archive_processes_total',
      'git archive processes started by this process (cold archives; one per archive however many ask at once)',
      GitProcessGauges.archivesStarted,
    );
    const git = this.git;
    const registers = [this.metrics.registry];
    this.metrics.gauge(
      'lode_blob_cache_bytes',
      'Bytes of small blobs kept in memory by id (LODE_BLOB_CACHE_BYTES)',
      () => git.blobCache().bytes,
    );
    new Counter({
      name: 'lode_blob_cache_hits_total',
      help: 'Blob reads (raw blobs, the files API) answered from the blobs kept in memory',
      registers,
      collect(this: Counter) {
        this.reset();
        this.inc(git.blobCache().hits);
      },
    });
    const budget = this.budget;
    const labelNames = ['kind'] as const;
    /** A series per kind from the budget's figures, read at scrape time. */
    const perKind = (read: (s: GitWorkLaneStats) => number) =>
      function (this: Gauge<'kind'> | Counter<'kind'>) {
        const stats = budget.stats();
        this.reset();
        for (const kind of GIT_WORK_KINDS)
          if (this instanceof Gauge) this.set({ kind }, read(stats[kind]));
          else this.inc({ kind }, read(stats[kind]));
      };
    new Gauge({
      name: 'lode_git_budget_slots',
      help: 'Heavy git work of each kind allowed at once (LODE_GIT_BUDGET_*)',
      labelNames,
      registers,
      collect: perKind((s) => s.limit),
    });
    new Gauge({
      name: 'lode_git_budget_running',
      help: 'Heavy git work of each kind running now',
      labelNames,
      registers,
      collect: perKind((s) => s.running),
    });
    new Gauge({
      name: 'lode_git_budget_queue_length',
      help: 'Requests waiting for a slot of the heavy git work budget',
      labelNames,
      registers,
      collect: perKind((s) => s.waiting),
    });
    new Counter({
      name: 'lode_git_budget_started_total',
      help: 'Heavy git jobs started (a single-flight job once, however many requests share it)',
      labelNames,
      registers,
      collect: perKind((s) => s.started),
    });
    new Counter({
      name: 'lode_git_budget_waits_total',
      help: 'Heavy git jobs that waited for a slot before they started',
      labelNames,
      registers,
      collect: perKind((s) => s.waited),
    });
    new Counter({
      name: 'lode_git_budget_wait_seconds_total',
      help: 'Seconds waited for a slot by the jobs that got one',
      labelNames,
      registers,
      collect: perKind((s) => s.waitSeconds),
    });
    new Counter({
      name: 'lode_git_budget_refusals_total',
      help: 'Requests refused with 503 because no slot freed within LODE_GIT_BUDGET_WAIT_MS or the queue was full',
      labelNames,
      registers,
      collect: perKind((s) => s.refusedTimeout + s.refusedQueueFull),
    });
  }
}
