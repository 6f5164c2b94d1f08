import { Controller, Get } from '@nestjs/common';
import { QueueStats } from '../queue/queue-stats';
import { AdminOnly } from './current-actor.decorator';

/**
 * GitLab's Sidekiq metrics API (`lib/api/sidekiq_metrics.rb`), answered from BullMQ: administrators
 * only (401 without a token, 403 for anyone else, as GitLab's `authenticated_as_admin!`).
 */
@Controller('sidekiq')
@AdminOnly()
export class SidekiqMetricsController {
  constructor(private readonly stats: QueueStats) {}

  /** Each queue's backlog and latency, keyed by the queue's name. */
  @Get('queue_metrics')
  async queueMetrics() {
    return { queues: await this.stats.queueMetrics() };
  }

  /** The processes running workers, with their queues, concurrency and busy count. */
  @Get('process_metrics')
  async processMetrics() {
    return { processes: await this.stats.processMetrics() };
  }

  /** Totals of the jobs run, failed, waiting and kept failed. */
  @Get('job_stats')
  async jobStats() {
    return { jobs: await this.stats.jobStats() };
  }

  /** The three answers above in one. */
  @Get('compound_metrics')
  async compoundMetrics() {
    const [queues, processes, jobs] = await Promise.all([
      this.stats.queueMetrics(),
      this.stats.processMetrics(),
      this.stats.jobStats(),
    ]);
    return { queues, processes, jobs };
  }
}
