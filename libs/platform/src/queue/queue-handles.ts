import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { LodeConfig } from '../config/lode-config';
import { declaredQueueNames } from './job-processor';
import { openQueue } from './queue-connection';

/**
 * The process's producer-side handles on Lode's queues, for what reads or manages them from outside
 * the workers (the metrics, GitLab's Sidekiq metrics API, the queue dashboard): each queue is opened
 * once, through `openQueue`, when first asked for, and closed when the application stops.
 */
@Injectable()
export class QueueHandles implements OnApplicationShutdown {
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly config: LodeConfig) {}

  /** The handle on one queue (opening it does not wait for the backend: its operations do). */
  get(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = openQueue(this.config, name);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Every queue declared in this process, in declaration order. */
  all(): Queue[] {
    return declaredQueueNames().map((name) => this.get(name));
  }

  async onApplicationShutdown(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.all(queues.map((q) => q.close().catch(() => undefined)));
  }
}
