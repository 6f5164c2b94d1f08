/**
 * The audit context: GitLab's audit events, a projection of every context's events (each write with
 * its author, token, sudo or impersonation, client address, and the old and new value).
 */
export { AuditModule, AuditHttpModule } from './audit.module';
export { AuditEvents1763780003300 } from './migrations/1763780003300-audit-events';
export { AuditEventQueries, type AuditEventRow, type AuditEventFilters } from './audit-event.queries';
