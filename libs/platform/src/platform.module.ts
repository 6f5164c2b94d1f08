import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock, SystemClock } from './clock';
import { LodeConfig } from './config/lode-config';
import { EventStore } from './event-store/event-store';
import { PgEventStore } from './event-store/pg-event-store';
import { DATABASE_WATCH_ACTIVE, DatabaseWatch } from './database/database-watch';
import { PLANNER_STATISTICS_ACTIVE, PlannerStatistics } from './database/planner-statistics';
import { IdleMemoryTrim } from './runtime/idle-memory-trim';
import { PreparedStatements } from './database/prepared-statements';
import { EmbeddedTransactionRouting } from './database/transaction-scope';
import { DependencyProbe } from './dependency-probe';
import { HealthController } from './http/health.controller';
import { MetricsController } from './http/metrics.controller';
import { SidekiqMetricsController } from './http/sidekiq-metrics.controller';
import { EventLoopWatch } from './http/event-loop-watch';
import { WorkerHealthServer } from './http/worker-health-server';
import { Metrics } from './metrics/metrics';
import { Outbox } from './outbox/outbox';
import { OutboxRelay } from './outbox/outbox-relay';
import { Invalidations } from './outbox/invalidations';
import { OutboxRoutes } from './outbox/outbox-route';
import { ProjectionRegistry } from './projections/projector';
import { ProjectionRebuilder } from './projections/rebuild';
import { ProjectionStatus } from './projections/projection-status';
import { JobKinds } from './queue/job-processor';
import { QueueHandles } from './queue/queue-handles';
import { QueueStats } from './queue/queue-stats';
import { SecretBox } from './secrets/secret-box';
import { AuthFailureThrottle } from './throttle/auth-failures';
import { SharedCounters } from './throttle/counters';
import { RequestRateLimits } from './throttle/rate-limits';

/** The shared kernel every context uses: configuration, event store, projections, outbox, clock. */
@Global()
@Module({})
export class PlatformModule {
  static forRoot(config: LodeConfig, options: { http: boolean; relay: boolean }): DynamicModule {
    return {
      module: PlatformModule,
      controllers: options.http ? [HealthController, MetricsController, SidekiqMetricsController] : [],
      providers: [
        { provide: LodeConfig, useValue: config },
        { provide: Clock, useClass: SystemClock },
        { provide: EventStore, useClass: PgEventStore },
        ProjectionRegistry,
        OutboxRoutes,
        Outbox,
        Invalidations,
        ...(options.relay ? [OutboxRelay] : []),
        ProjectionRebuilder,
        ProjectionStatus,
        DependencyProbe,
        { provide: DATABASE_WATCH_ACTIVE, useValue: options.http || options.relay },
        DatabaseWatch,
        { provide: PLANNER_STATISTICS_ACTIVE, useValue: options.relay },
        PlannerStatistics,
        PreparedStatements,
        EmbeddedTransactionRouting,
        JobKinds,
        QueueHandles,
        QueueStats,
        { provide: SecretBox, useFactory: () => SecretBox.forConfig(config) },
        AuthFailureThrottle,
        SharedCounters,
        RequestRateLimits,
        Metrics,
        { provide: EventLoopWatch, useFactory: () => new EventLoopWatch() },
        IdleMemoryTrim,
        // Only where workers run without HTTP (LODE_ROLE=worker), and only on LODE_WORKER_HEALTH_PORT.
        ...(!options.http && options.relay ? [WorkerHealthServer] : []),
      ],
      exports: [
        Metrics,
        LodeConfig,
        Clock,
        EventStore,
        ProjectionRegistry,
        OutboxRoutes,
        Outbox,
        Invalidations,
        ProjectionRebuilder,
        ProjectionStatus,
        DependencyProbe,
        DatabaseWatch,
        PlannerStatistics,
        PreparedStatements,
        JobKinds,
        QueueHandles,
        QueueStats,
        SecretBox,
        AuthFailureThrottle,
        RequestRateLimits,
        ...(options.relay ? [OutboxRelay] : []),
        ...(!options.http && options.relay ? [WorkerHealthServer] : []),
      ],
    };
  }
}
