/** The hooks context: project hooks, the SSRF guard, and webhook deliveries with their log. */
export { HooksModule, HooksHttpModule, HooksWorkerModule } from './hooks.module';
export { Hooks1763780000500 } from './migrations/1763780000500-hooks';
export { HookDeliveries1763780000600 } from './migrations/1763780000600-hook-deliveries';
export { HookSecrets1763780000700 } from './migrations/1763780000700-hook-secrets';
export { DeliveriesOnOwnStreams1763780001900 } from './migrations/1763780001900-deliveries-on-own-streams';
export { SystemHooks1763780002700 } from './migrations/1763780002700-system-hooks';
export { HookBranchFilter1763780002502 } from './migrations/1763780002502-hook-branch-filter';
export { HookFailures1763780003200 } from './migrations/1763780003200-hook-failures';
export { HookDeliveryLog1763780003400 } from './migrations/1763780003400-hook-delivery-log';
export { WEBHOOKS_QUEUE } from './webhooks/webhook-jobs';
/** Hooks (their URL masked, never their token) and each hook's delivery log (URLs without credentials). */
export { HookQueries, type HookRow, type DeliveryRow } from './queries/hook.queries';
/** The delivery log's writes; `prune` is the retention job's work (tests and operators may run it). */
export { DeliveryLog } from './delivery/delivery-log';
/** For a restore: whether the installation's key opens the sealed hook secrets it now holds. */
export { sealedSecretSample } from './secrets/hook-secrets';
export { checkHookUrl, parseHookUrl, isForbiddenAddress, pinnedLookup } from './delivery/url-guard';
export type { ProjectHookEvent } from './domain/project-hook';
export type { SystemHookEvent } from './domain/system-hook';
