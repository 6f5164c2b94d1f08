import { GitRepositories, projectRepo, type Tag } from '@app/git';
import { ApiError, LodeConfig, NotFound, type Actor } from '@app/platform';
import { ProjectQueries, ZERO_SHA, type ProjectRow } from '@app/projects';
import { UserQueries } from '@app/users';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DeliveryLog } from '../delivery/delivery-log';
import { HookQueries, type HookRow } from '../queries/hook.queries';
import { HookDelivery } from './hook-delivery';
import { hookEventName, pushPayload, type Pusher } from './push-payload';
import { delivered, deliveryReason, type WebhookOutcome } from './webhook-sender';

/** The triggers Lode can test (GitLab's `ProjectHook.triggers` values it has events for). */
export const TEST_TRIGGERS = ['push_events', 'tag_push_events'] as const;
export type TestTrigger = (typeof TEST_TRIGGERS)[number];

/** GitLab's `Gitlab::DataBuilder::Push.build_sample`: the default branch's 3 newest commits. */
const SAMPLE_COMMITS = 3;

/**
 * GitLab 17.x's `POST /projects/:id/hooks/:hook_id/test/:trigger` (lib/api/hooks/test.rb,
 * app/services/test_hooks/project_service.rb) and `POST .../events/:hook_log_id/resend`
 * (lib/api/hooks/resend_hook.rb, WebHooks::Events::ResendService). Both send at once, not through
 * the queue, forced (sent even while the hook is disabled for failing), and are logged like any delivery.
 */
@Injectable()
export class ProjectHookTest {
  constructor(
    private readonly hooks: HookQueries,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly git: GitRepositories,
    private readonly config: LodeConfig,
    private readonly delivery: HookDelivery,
    private readonly log: DeliveryLog,
  ) {}

  /**
   * Sends the trigger's sample. GitLab answers 201 `{"message":"201 Created"}` (`created!`) when the
   * receiver answered 2xx, else 422 with the service's message (the receiver's body, or why there was
   * no answer); a project without commits is 422 `Ensure the project has at least one commit.`.
   */
  async test(hook: HookRow, trigger: TestTrigger, actor: Actor): Promise<{ message: string }> {
    const project = await this.projects.findForSystem(hook.project_id);
    if (!project) throw new NotFound();
    const user = await this.users.find(actor.id);
    const pusher: Pusher = user
      ? { id: user.id, name: user.name, username: user.username, email: user.email }
      : { id: actor.id, name: actor.username, username: actor.username, email: '' };
    const payload = await this.sample(project, trigger, pusher);
    const event = hookEventName(payload.ref);
    const outcome = await this.delivery.send({
      kind: 'project',
      hook,
      event,
      // A test is one request of its own: its own event UUID (and so its own Idempotency-Key).
      eventUuid: randomUUID(),
      payload,
      attempt: 1,
      force: true,
      reenable: true,
    });
    return succeeded(outcome);
  }

  /**
   * Sends a logged delivery again: its payload, event and event UUID (so the same `Idempotency-Key`).
   * GitLab answers 201 `{"response_status": <the receiver's status>}` whatever the status, 422 when
   * there was no answer; an entry from before Lode kept payloads cannot be resent (422).
   */
  async resend(hook: HookRow, logId: string): Promise<{ response_status: number }> {
    const entry = await this.log.entry(hook.id, logId);
    if (entry.request_data === null) throw new ApiError(422, 'This webhook event has no payload to resend');
    const outcome = await this.delivery.send({
      kind: 'project',
      hook,
      event: entry.event,
      eventUuid: entry.event_uuid,
      payload: entry.request_data,
      attempt: await this.log.nextAttempt(hook.id, entry.event_uuid),
      force: true,
    });
    if (outcome === 'skipped' || outcome.status === null)
      throw new ApiError(422, outcome === 'skipped' ? 'skipped' : (deliveryReason(outcome) ?? 'connection failed'));
    return { response_status: outcome.status };
  }

  /**
   * `push_events`: GitLab's sample, the default branch as if its 3 newest commits were pushed.
   * `tag_push_events`: the newest tag (by its commit's date) as if it were pushed; GitLab 17.x's
   * ProjectService sends the push sample for it too (an alias), which Lode does when there is no tag.
   */
  private async sample(project: ProjectRow, trigger: TestTrigger, pusher: Pusher) {
    const repo = projectRepo(project.id);
    const branch = project.default_branch;
    const head = branch ? await this.git.resolveCommit(repo, `refs/heads/${branch}`) : undefined;
    if (!head) throw new ApiError(422, 'Ensure the project has at least one commit.');
    if (trigger === 'tag_push_events') {
      const tags = await this.git.tags(repo);
      const newest = tags.sort((a, b) => tagTime(b) - tagTime(a) || a.name.localeCompare(b.name))[0];
      if (newest) {
        const [update] = await this.git.describeRefUpdates(
          repo,
          [{ ref: `refs/tags/${newest.name}`, before: ZERO_SHA, after: newest.target }],
          null,
        );
        return pushPayload(update, project, pusher, this.config);
      }
    }
    const [update] = await this.git.describeRefUpdates(
      repo,
      [{ ref: `refs/heads/${branch}`, before: ZERO_SHA, after: head.id }],
      null,
    );
    const commits = update.commits.slice(-SAMPLE_COMMITS);
    return pushPayload({ ...update, commits, totalCommitsCount: commits.length }, project, pusher, this.config);
  }
}

const tagTime = (t: Tag) => Date.parse(t.commit.committedDate) || 0;

function succeeded(outcome: WebhookOutcome | 'skipped'): { message: string } {
  if (outcome !== 'skipped' && delivered(outcome)) return { message: '201 Created' };
  // GitLab's message: the receiver's answer body (WebHookService#execute), or the error without one.
  if (outcome === 'skipped') throw new ApiError(422, 'skipped');
  throw new ApiError(
    422,
    outcome.status !== null
      ? outcome.responseBody || `HTTP ${outcome.status}`
      : (deliveryReason(outcome) ?? 'connection failed'),
  );
}
