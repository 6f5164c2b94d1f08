/** The hooks context: project hooks, the SSRF guard, and (to come) their deliveries. */
export { HooksModule, HooksHttpModule } from './hooks.module';
export { Hooks1763780000500 } from './migrations/1763780000500-hooks';
export { checkHookUrl, parseHookUrl, isForbiddenAddress, pinnedLookup } from './delivery/url-guard';
export type { ProjectHookEvent } from './domain/project-hook';
