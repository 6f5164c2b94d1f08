import { ACCESS } from '@app/groups';
import { Conflict, NotFound, RecordInvalid } from '@app/platform';
import { existing, type ProjectWith } from '../projects/existing-project';
import { MAX_PROTECTED_BRANCH_NAME, ruleMatches, type BranchCaller } from './protected-branch';

/*
 * Protected tags (GitLab 11.3's API over the rules GitLab keeps since 9.1): rules on the project's
 * stream (`project-<id>`), each a tag name or a wildcard (`v*`) with one create access level, as
 * GitLab CE keeps them (`ProtectedTag` with exactly one `create_access_levels` row).
 */

/** One rule, as the project's state, the read model and the gate's decision take it. */
export interface ProtectedTagRule {
  name: string;
  createAccessLevel: number;
}

/** GitLab's `ProtectedRefAccess::ALLOWED_ACCESS_LEVELS`, the same three as for branches. */
export const PROTECTED_TAG_ACCESS_LEVELS = [ACCESS.none, ACCESS.developer, ACCESS.maintainer] as const;

/** GitLab's words (`lib/gitlab/checks/change_access.rb`, 11.x), shown by git as `remote: GitLab: ...`. */
export const PROTECTED_TAG_REFUSALS = {
  update: 'Protected tags cannot be updated.',
  delete: 'Protected tags cannot be deleted.',
  create: 'You are not allowed to create this tag as it is protected.',
} as const;

/** One tag update a push (or an API write) asks for. */
export interface TagChange {
  /** The tag name, without `refs/tags/`. */
  tag: string;
  /** The tag does not exist yet (old value all zeros). */
  creation: boolean;
  /** The tag goes away (new value all zeros). */
  deletion: boolean;
}

/**
 * Why GitLab refuses this tag update, or undefined when it goes through (`ChangeAccess#protected_tag_checks`).
 * A deploy key is never refused (`skip_authorization: deploy_key?` skips every change check, as for
 * branches). A tag a rule matches is never moved or deleted, by anyone, administrators and the API
 * included; it is created by whoever a matching rule's level admits (`can_create_tag?`:
 * administrators pass unless the level is "No one", `CreateAccessLevel#check_access`).
 */
function refusal(rules: readonly ProtectedTagRule[], change: TagChange, caller: BranchCaller): string | undefined {
  if ('deployKey' in caller) return undefined;
  const matching = rules.filter((r) => ruleMatches(r.name, change.tag));
  if (!matching.length) return undefined;
  if (change.deletion) return PROTECTED_TAG_REFUSALS.delete;
  if (!change.creation) return PROTECTED_TAG_REFUSALS.update;
  const mayCreate = matching.some(
    (r) => r.createAccessLevel !== ACCESS.none && (caller.isAdmin || caller.accessLevel >= r.createAccessLevel),
  );
  return mayCreate ? undefined : PROTECTED_TAG_REFUSALS.create;
}

/** The protected-tag rules as the pre-receive gate asks them. */
export const ProtectedTagPolicy = { refusal } as const;

/* Decisions on the project's stream. */

/** The project's events about its tag rules: members of the project's event union (projects/project.ts). */
export type ProtectedTagEvent =
  | { type: 'ProtectedTagCreated'; data: ProtectedTagRule & { projectId: number; at: string } }
  | { type: 'ProtectedTagRemoved'; data: { projectId: number; name: string; at: string } };

/** What these decisions read of the project's state (projects/project.ts's `Project` is one). */
type ProjectTagRules = ProjectWith<{ protectedTags: readonly ProtectedTagRule[] }>;

const byName = (s: { protectedTags: readonly ProtectedTagRule[] }, name: string) =>
  s.protectedTags.find((r) => r.name === name);

/**
 * `POST /projects/:id/protected_tags`: 409 when a rule of that exact name exists (checked first, as
 * the route does); a blank name fails the model's `presence` validation, answered 422.
 */
export function protectTag(
  s: ProjectTagRules,
  rule: ProtectedTagRule,
  now: Date,
): Extract<ProtectedTagEvent, { type: 'ProtectedTagCreated' }>[] {
  const p = existing(s);
  if (byName(p, rule.name)) throw new Conflict(`Protected tag '${rule.name}' already exists`);
  if (!rule.name.trim()) throw new RecordInvalid(["Name can't be blank"]);
  if (rule.name.length > MAX_PROTECTED_BRANCH_NAME)
    throw new RecordInvalid([`Name is too long (maximum is ${MAX_PROTECTED_BRANCH_NAME} characters)`]);
  return [{ type: 'ProtectedTagCreated', data: { projectId: p.projectId, ...rule, at: now.toISOString() } }];
}

/** `DELETE /projects/:id/protected_tags/:name`: GitLab's `find_by!` miss is `404 Not found`. */
export function unprotectTag(s: ProjectTagRules, name: string, now: Date): ProtectedTagEvent[] {
  const p = existing(s);
  if (!byName(p, name)) throw new NotFound();
  return [{ type: 'ProtectedTagRemoved', data: { projectId: p.projectId, name, at: now.toISOString() } }];
}

/** Folds one protected-tag event into the rules (creation order kept). */
export function evolveTagRules(rules: readonly ProtectedTagRule[], e: ProtectedTagEvent): ProtectedTagRule[] {
  switch (e.type) {
    case 'ProtectedTagCreated':
      return [...rules, { name: e.data.name, createAccessLevel: e.data.createAccessLevel }];
    case 'ProtectedTagRemoved':
      return rules.filter((r) => r.name !== e.data.name);
  }
}
