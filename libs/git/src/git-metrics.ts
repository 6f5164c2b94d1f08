import { Metrics } from '@app/platform';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { GitProcessGauges } from './process-gauges';

/** Registers the git port's gauges with the process's metrics (read at scrape time). */
@Injectable()
export class GitMetrics implements OnModuleInit {
  constructor(private readonly metrics: Metrics) {}

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
  }
}
