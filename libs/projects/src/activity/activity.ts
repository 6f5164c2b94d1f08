import type { RefUpdate } from '@app/git';
import { isTagRef, isZeroSha } from '../pushes/repository-push';

/*
 * GitLab's contribution events (the Events API), as GitLab 10.x records them (app/models/event.rb,
 * app/services/event_create_service.rb, app/services/push_event_payload_service.rb). Lode records
 * what it has: a project created (`created`, or `imported` when made from an import URL), a member
 * joining or leaving (`joined`, `left`, the member as the author), and one push event per branch or
 * tag update. GitLab's other actions (issues, merge requests, notes, milestones) have no source in
 * Lode, so their filters answer empty lists. A project's deletion takes its events with it, as
 * GitLab's cascade does: 10.x records no `destroyed` event for a project.
 */

/** GitLab's `action` filter values (Event::ACTIONS). */
export const EVENT_ACTIONS = [
  'created',
  'updated',
  'closed',
  'reopened',
  'pushed',
  'commented',
  'merged',
  'joined',
  'left',
  'destroyed',
  'expired',
] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

/** GitLab's `target_type` filter values (Event::TARGET_TYPES) and the class name stored for each. */
export const EVENT_TARGET_TYPES = {
  issue: 'Issue',
  milestone: 'Milestone',
  merge_request: 'MergeRequest',
  note: 'Note',
  project: 'Project',
  snippet: 'Snippet',
  user: 'User',
} as const;
export type EventTargetType = keyof typeof EVENT_TARGET_TYPES;

/** GitLab's PushEventPayload entity (10.x: no `ref_count` yet). */
export interface PushData {
  commit_count: number;
  action: 'created' | 'removed' | 'pushed';
  ref_type: 'branch' | 'tag';
  commit_from: string | null;
  commit_to: string | null;
  ref: string;
  commit_title: string | null;
}

/** One contribution event, before it becomes a row. */
export interface ActivityEntry {
  action: EventAction;
  actionName: string;
  pushData: PushData | null;
}

/**
 * Rails' `String#truncate(70)`: at most 70 characters, the last three of a cut one being "...".
 * GitLab keeps the first line of the newest commit's message so (PushEventPayloadService#commit_title).
 */
export function commitTitle(message: string | undefined): string | null {
  if (message === undefined) return null;
  const end = message.search(/[\r\n]/);
  const line = (end >= 0 ? message.slice(0, end) : message).trim();
  return [...line].length > 70 ? [...line].slice(0, 67).join('') + '...' : line;
}

/**
 * The push event of one ref update (GitLab's EventCreateService#push, one per updated branch or tag),
 * or none for refs that are neither (GitLab records branch and tag pushes only).
 */
export function pushEntry(u: RefUpdate): ActivityEntry | null {
  const tag = isTagRef(u.ref);
  if (!tag && !u.ref.startsWith('refs/heads/')) return null;
  const created = isZeroSha(u.before);
  const removed = isZeroSha(u.after);
  const action = created ? 'created' : removed ? 'removed' : 'pushed';
  return {
    action: 'pushed',
    // Event#push_action_name.
    actionName: created ? 'pushed new' : removed ? 'deleted' : 'pushed to',
    pushData: {
      commit_count: removed ? 0 : u.totalCommitsCount,
      action,
      ref_type: tag ? 'tag' : 'branch',
      commit_from: created ? null : u.before,
      commit_to: removed ? null : u.after,
      ref: u.ref.replace(/^refs\/(heads|tags)\//, ''),
      // The newest commit the update brought; commits are stored oldest first.
      commit_title: commitTitle(u.commits.at(-1)?.message),
    },
  };
}
