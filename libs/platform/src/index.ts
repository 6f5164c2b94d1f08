/** The shared kernel: event store, projections, outbox, HTTP edge. No business rules live here. */
export * from './errors';
export * from './context';
export { Clock, SystemClock } from './clock';
export {
  LodeConfig,
  GITLAB_API_VERSION,
  defaultGitBudget,
  type GitBudgetSettings,
  type LodeRole,
} from './config/lode-config';
export {
  dataSourceOptions,
  describeDatabaseUrl,
  embeddedMove,
  embeddedPaths,
  EmbeddedDatabaseMoved,
  ensureDatabase,
  movedMarker,
  runMigrations,
  startDatabase,
  withOwnConnection,
  type ConfiguredMigration,
  type DatabaseHandle,
  type MigratedDatabase,
  type OwnConnectionOptions,
} from './database/database';
export { EmbeddedPostgres } from './database/embedded-postgres';
export { PlannerStatistics } from './database/planner-statistics';
export {
  DatabaseWatch,
  databaseGate,
  isDatabaseUnavailable,
  RETRY_AFTER_S as DATABASE_RETRY_AFTER_S,
} from './database/database-watch';
export { DependencyProbe } from './dependency-probe';
export { execute, firstRow, oneRow, pgSql, quoteIdent, rows, type PgClient, type Sql } from './database/sql';
export { GroupCommit } from './database/group-commit';
export { PreparedStatements } from './database/prepared-statements';
export { EventStore, UniqueViolation, type UnitOfWork } from './event-store/event-store';
export { PgEventStore, constraintOf } from './event-store/pg-event-store';
export { assertNever, type Decider, type DomainEvent, type EventMetadata, type Recorded } from './event-store/recorded';
export { EventStore1763780000000 } from './event-store/migrations/1763780000000-event-store';
export { OutboxOutcomes1763780001400 } from './event-store/migrations/1763780001400-outbox-outcomes';
export { relocateEvents } from './event-store/relocate-events';
export { ThrottleCounters1763780001700 } from './throttle/migrations/1763780001700-throttle-counters';
export {
  ProjectionRegistry,
  EVERY_EVENT,
  dispatch,
  handledTypes,
  type EventHandlers,
  type Projector,
  type ProjectorReplay,
} from './projections/projector';
export {
  ProjectionRebuilder,
  REBUILD_APPLICATION_NAME,
  rebuildProgressOf,
  type RebuildProgress,
  type RebuildResult,
} from './projections/rebuild';
export { ProjectionStatus, type ProjectionReport } from './projections/projection-status';
export { OutboxRoutes, type OutboxJob, type OutboxRoute } from './outbox/outbox-route';
export { OutboxRelay, MAX_REDISPATCHES } from './outbox/outbox-relay';
export {
  Outbox,
  OUTBOX_CHANNEL,
  queuedJobId,
  dispatchKeyOf,
  type JobOutcome,
  type OutboxQueueStatus,
} from './outbox/outbox';
export {
  Invalidations,
  INVALIDATION_CHANNEL,
  type InvalidationRoute,
  type InvalidationSubscriber,
} from './outbox/invalidations';
export { openQueue, QUEUE_SCHEMA, queueConnection, redisOptions } from './queue/queue-connection';
export { logConnectionErrors } from './queue/connection-errors';
export {
  JobKinds,
  JobProcessor,
  JobQueue,
  declaredQueueNames,
  type JobData,
  type JobHandlers,
} from './queue/job-processor';
export { QueueHandles } from './queue/queue-handles';
export { QueueStats, type QueueMetric, type WorkerProcess, type JobStats } from './queue/queue-stats';
export { workerOptions, workerName, parseWorkerName, type WorkerIdentity } from './queue/worker-identity';
export { PlatformModule } from './platform.module';
export { SecretBox, SECRET_KEY_FILE } from './secrets/secret-box';
export { AuthFailureThrottle, BAN_SECONDS } from './throttle/auth-failures';
export { RequestRateLimits } from './throttle/rate-limits';
export { SharedCounters } from './throttle/counters';
export { GitlabErrorFilter, MalformedMultipart } from './http/gitlab-error.filter';
export { sendClientError } from './http/client-error';
export {
  AcceptsFiles,
  credentialsMayFollowInBody,
  deferAuthentication,
  multipartFields,
  FIELDS_BODY_LIMIT,
  leftoverUploads,
} from './http/multipart';
export { GitlabExpressAdapter } from './http/gitlab-express.adapter';
export { hasBody, mediaTypeGate } from './http/media-type-gate';
export { loadPackage } from './load-when-needed';
export { GitlabParams, GitlabValidationPipe, Nullable, validateParams } from './http/gitlab-params';
export { requestInputMiddleware, hasControlCharacters, MAX_INPUT_DEPTH } from './http/request-input';
export { AtLeastOneOf, AllOrNoneOf } from './http/at-least-one-of';
export {
  Page,
  KeysetPage,
  PaginationDto,
  PaginationInterceptor,
  decodeCursor,
  encodeCursor,
  keysetPerPage,
  pageParams,
  setPaginationHeaders,
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  COUNT_LIMIT,
  LINK_HEADER_BUDGET,
  type PageParams,
} from './http/pagination';
export { redactSecrets, redactHeaders, FILTERED } from './logging/redact';
export { RedactingLogger } from './logging/redacting-logger';
export { Logs, type LogFormat } from './logging/log-output';
export { Metrics, type DeliveryOutcome } from './metrics/metrics';
export { labelRoute, requestLogMiddleware, routeOf, QUEUE_DASHBOARD_PATH } from './http/request-log.middleware';
export {
  frontDoor,
  hotReadsMiddleware,
  plainlyAnonymous,
  type FrontDoorParts,
  type HotAnswer,
  type HotRead,
} from './http/front-door';
export { requestContextMiddleware } from './http/request-context.middleware';
export {
  securityHeadersMiddleware,
  markAuthenticated,
  AUTHENTICATED_CACHE_CONTROL,
  SECURITY_HEADERS,
} from './http/security-headers';
export {
  CurrentActor,
  Authenticated,
  AdminOnly,
  RefusedCredentialsAreAnonymous,
  ACCESS_KEY,
  REFUSED_CREDENTIALS_KEY,
  type RouteAccess,
} from './http/current-actor.decorator';
export { RouteIntPipe, intParam, NO_SUCH_ID } from './http/id-params';
export { ToBool, ToInt, ToStringArray, ToIntArray, Trim, toBool, toInt, MAX_INT } from './http/transforms';
export { sendJson } from './http/json-response';
export { markAnsweredElsewhere, responseHead } from './http/answered-elsewhere';
export { VersionController, buildRevision } from './http/version.controller';
export { MetadataController } from './http/metadata.controller';
export { WorkerHealthServer } from './http/worker-health-server';
export {
  checkCustomAttribute,
  holdsCustomAttribute,
  customAttributeFilter,
  CustomAttributeTable,
} from './custom-attributes';
/** A Buffer that holds only its own bytes, for caches bounded by bytes. */
export { ownBuffer } from './runtime/own-buffer';
export { collectAsStreamed, collector } from './runtime/streamed-memory';
/** glibc's malloc_trim through native/malloc-trim, when it is built: memory measurements settle with it. */
export { mallocTrimAddon } from './runtime/malloc-trim';
/** Which process built a half-finished thing, so a later start can tell a dead builder's leftovers. */
export { THIS_PROCESS, ownerTag, parseOwnerTag, ownerGone, type ProcessOwner } from './process-owner';
