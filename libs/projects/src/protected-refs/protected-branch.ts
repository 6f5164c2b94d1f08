import { ACCESS } from '@app/groups';
import { Conflict, NotFound, RecordInvalid } from '@app/platform';
import { existing, type ProjectWith } from '../projects/existing-project';

/*
 * Protected branches: rules on the project's stream (`project-<id>`), each a branch name or a
 * wildcard (`release-*`) with one push and one merge access level, as GitLab CE 10.x keeps them
 * (`ProtectedBranch` with exactly one `push_access_levels` and one `merge_access_levels` row).
 */

/** One rule, as the project's state, the read model and the gate's decision take it. */
export interface ProtectedBranchRule {
  name: string;
  pushAccessLevel: number;
  mergeAccessLevel: number;
  /**
   * GitLab 13.x's `allow_force_push`: a forced update of a branch this rule covers is not refused for
   * that alone. Absent in events before it existed, and read as false.
   */
  allowForcePush?: boolean;
}

/** GitLab's `ProtectedRefAccess::ALLOWED_ACCESS_LEVELS`: no one, developers + masters, masters. */
export const PROTECTED_BRANCH_ACCESS_LEVELS = [ACCESS.none, ACCESS.developer, ACCESS.maintainer] as const;

/** GitLab 10.x's `human_access_levels` (11.0 renamed masters to maintainers). */
export const ACCESS_LEVEL_DESCRIPTIONS: Record<number, string> = {
  [ACCESS.maintainer]: 'Masters',
  [ACCESS.developer]: 'Developers + Masters',
  [ACCESS.none]: 'No one',
};

/**
 * GitLab's `default_branch_protection` (`Gitlab::Access::PROTECTION_*`): 0 none, 1 developers can
 * push, 2 full (GitLab's default), 3 developers can merge but not push.
 */
export type DefaultBranchProtection = 0 | 1 | 2 | 3;

/** The levels the default branch gets on its first push; undefined when the setting protects nothing. */
export function defaultBranchLevels(
  protection: DefaultBranchProtection,
): Pick<ProtectedBranchRule, 'pushAccessLevel' | 'mergeAccessLevel'> | undefined {
  if (protection === 0) return undefined;
  return {
    pushAccessLevel: protection === 1 ? ACCESS.developer : ACCESS.maintainer,
    mergeAccessLevel: protection === 3 ? ACCESS.developer : ACCESS.maintainer,
  };
}

/**
 * GitLab's `Project#after_create_default_branch` (10.x): the rule the default branch gets when it comes
 * into being (the first push into an empty repository, a fork's copy finished), unless the setting
 * protects nothing, a rule covers the branch already, or the name is too long for a rule (then it stays
 * unprotected rather than failing what created it).
 */
export function defaultBranchProtected(
  projectId: number,
  rules: readonly ProtectedBranchRule[],
  branch: string | null,
  protection: DefaultBranchProtection,
  at: string,
): Extract<ProtectedBranchEvent, { type: 'ProtectedBranchCreated' }>[] {
  const levels = defaultBranchLevels(protection);
  if (!levels || branch === null || branch.length > MAX_PROTECTED_BRANCH_NAME) return [];
  if (matchingRules(rules, branch).length) return [];
  return [{ type: 'ProtectedBranchCreated', data: { projectId, name: branch, ...levels, at } }];
}

/**
 * GitLab's `ProtectedRefMatcher#matches?`: the exact name, or a wildcard whose `*` stands for any
 * run of characters (slashes included), anchored at both ends.
 */
export function ruleMatches(ruleName: string, branch: string): boolean {
  if (!ruleName) return false;
  if (ruleName === branch) return true;
  if (!ruleName.includes('*')) return false;
  const pattern = ruleName
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(branch);
}

/** GitLab's `ProtectedBranch.matching`: every rule that covers the branch. */
export const matchingRules = (rules: readonly ProtectedBranchRule[], branch: string): ProtectedBranchRule[] =>
  rules.filter((r) => ruleMatches(r.name, branch));

/** The three keys GitLab's Branch entity computes from the rules (`protected`, `developers_can_*`). */
export interface BranchProtectionFlags {
  protected: boolean;
  developers_can_push: boolean;
  developers_can_merge: boolean;
}

/**
 * GitLab's Branch entity: `protected` when a rule matches; `developers_can_push`/`_merge` when a
 * matching rule's level is exactly developer (`developers_can?`), so a "No one" rule says false.
 */
function branchFlags(rules: readonly ProtectedBranchRule[], branch: string): BranchProtectionFlags {
  const matching = matchingRules(rules, branch);
  return {
    protected: matching.length > 0,
    developers_can_push: matching.some((r) => r.pushAccessLevel === ACCESS.developer),
    developers_can_merge: matching.some((r) => r.mergeAccessLevel === ACCESS.developer),
  };
}

/** One branch update a push (or an API write) asks for. */
export interface BranchChange {
  /** The branch name, without `refs/heads/`. */
  branch: string;
  /** The branch does not exist yet (old value forty zeros). */
  creation: boolean;
  /** The branch goes away (new value forty zeros). */
  deletion: boolean;
  /** The old tip is not an ancestor of the new one (a non fast-forward update). */
  forced: boolean;
  /**
   * The write comes through the API (GitLab's `protocol == 'web'`), not git: 10.x lets masters delete
   * a protected branch that way only. Defaults to false (git over HTTP or SSH).
   */
  viaApi?: boolean;
}

/**
 * Who asks: a user, with their membership level on the project (direct, through a group or a share;
 * an administrator's is not raised: GitLab's `max_member_access`) and whether they are an
 * administrator; or a deploy key that may push to the project (`ProjectAccessPolicy.deployKeyPushRefusal`
 * said yes). GitLab 10.x runs no branch check at all for a deploy key (`GitAccess` builds its
 * `ChangeAccess` with `skip_authorization: deploy_key?`): it pushes, force-pushes and deletes
 * protected branches, the default branch included.
 */
export type BranchCaller = { accessLevel: number; isAdmin: boolean } | { deployKey: true };

/** What the gate knows of the repository beside the rules; without it those two checks are skipped. */
export interface BranchRepositoryFacts {
  /** The project's default branch (`projects.default_branch`), null before the first push. */
  defaultBranch: string | null;
  /** The repository has no branch before this push (GitLab's `empty_repo?`). */
  empty: boolean;
  /** LODE_DEFAULT_BRANCH_PROTECTION. */
  defaultBranchProtection: DefaultBranchProtection;
}

/** GitLab 10.x's words (`lib/gitlab/checks/change_access.rb`), shown by the git client as `remote: GitLab: ...`. */
export const PROTECTED_BRANCH_REFUSALS = {
  deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
  forcePush: 'You are not allowed to force push code to a protected branch on this project.',
  delete:
    'You are not allowed to delete protected branches from this project. Only a project master or owner can delete a protected branch.',
  deleteOutsideApi: 'You can only delete protected branches using the web interface.',
  push: 'You are not allowed to push code to protected branches on this project.',
} as const;

/**
 * GitLab's `Project#user_can_push_to_empty_repo?`: into an empty repository that the setting protects
 * (2 or 3) only members above developer push; administrators are not exempt (their level counts).
 */
const emptyRepositoryProtected = (p: DefaultBranchProtection) => p === 2 || p === 3;

/**
 * Why GitLab 10.x refuses this branch update, or undefined when it goes through. Only the branch
 * rules: whether the caller may push to the project at all is `ProjectAccessPolicy`'s question,
 * asked first. A deploy key is never refused here (10.x's `skip_authorization`); for a user, in
 * 10.x's order (`ChangeAccess#branch_checks`):
 * 1. deleting the default branch is refused to everyone;
 * 2. a branch is protected when a rule matches it, or (any branch) when the repository is empty and
 *    the setting is 2 or 3 (`ProtectedBranch.protected?`);
 * 3. a forced update of a protected branch is refused to everyone, administrators included, unless a
 *    matching rule allows force pushes (13.x's `ProtectedBranch.allow_force_push?`); the push's own
 *    checks below still apply;
 * 4. deleting one needs master (administrators pass, `delete_protected_branch`) and the API;
 * 5. any other update needs a matching rule's push level (administrators pass unless it is "No one"),
 *    except into an empty repository, where whoever may push code does, unless the setting is 2 or 3:
 *    then only masters and owners (`user_can_push_to_empty_repo?`).
 * 10.x has no rule of its own for creating a protected branch: it is checked as a push (later GitLab
 * added `You are not allowed to create protected branches on this project.`).
 */
function refusal(
  rules: readonly ProtectedBranchRule[],
  change: BranchChange,
  caller: BranchCaller,
  repository?: BranchRepositoryFacts,
): string | undefined {
  if ('deployKey' in caller) return undefined;
  if (change.deletion && repository?.defaultBranch === change.branch)
    return PROTECTED_BRANCH_REFUSALS.deleteDefaultBranch;
  const matching = matchingRules(rules, change.branch);
  const emptyAndProtected =
    repository !== undefined && repository.empty && emptyRepositoryProtected(repository.defaultBranchProtection);
  if (!matching.length && !emptyAndProtected) return undefined;
  if (change.forced && !matching.some((r) => r.allowForcePush)) return PROTECTED_BRANCH_REFUSALS.forcePush;
  if (change.deletion) {
    if (!caller.isAdmin && caller.accessLevel < ACCESS.maintainer) return PROTECTED_BRANCH_REFUSALS.delete;
    return change.viaApi ? undefined : PROTECTED_BRANCH_REFUSALS.deleteOutsideApi;
  }
  // `user_can_push_to_empty_repo?`: whoever may push code, unless the setting protects an empty repository.
  if (
    repository?.empty &&
    (!emptyRepositoryProtected(repository.defaultBranchProtection) || caller.accessLevel > ACCESS.developer)
  )
    return undefined;
  const mayPush = matching.some(
    (r) => r.pushAccessLevel !== ACCESS.none && (caller.isAdmin || caller.accessLevel >= r.pushAccessLevel),
  );
  return mayPush ? undefined : PROTECTED_BRANCH_REFUSALS.push;
}

/**
 * The protected-branch rules as pure decisions: what the pre-receive gate asks of every branch update
 * (`refusal`), and what the Branch entity shows (`branchFlags`).
 */
export const ProtectedBranchPolicy = { refusal, branchFlags, matchingRules } as const;

/* Decisions on the project's stream. */

/** The project's events about its rules: members of the project's event union (projects/project.ts). */
export type ProtectedBranchEvent =
  | { type: 'ProtectedBranchCreated'; data: ProtectedBranchRule & { projectId: number; at: string } }
  | {
      type: 'ProtectedBranchUpdated';
      data: {
        projectId: number;
        name: string;
        pushAccessLevel?: number;
        mergeAccessLevel?: number;
        allowForcePush?: boolean;
        at: string;
      };
    }
  | { type: 'ProtectedBranchRemoved'; data: { projectId: number; name: string; at: string } };

/** What these decisions read of the project's state (projects/project.ts's `Project` is one). */
type ProjectRules = ProjectWith<{ protectedBranches: readonly ProtectedBranchRule[] }>;

const byName = (s: { protectedBranches: readonly ProtectedBranchRule[] }, name: string) =>
  s.protectedBranches.find((r) => r.name === name);

/** Longer names would not fit the read model's primary key index (and no branch name needs them). */
export const MAX_PROTECTED_BRANCH_NAME = 255;

/**
 * `POST /projects/:id/protected_branches`: 409 when a rule of that exact name exists; a blank name
 * fails GitLab's model validation (`validates :name, presence: true`), which the API answers 422, and
 * so does a name over 255 characters here (in Rails' words).
 */
export function protectBranch(
  s: ProjectRules,
  rule: ProtectedBranchRule,
  now: Date,
): Extract<ProtectedBranchEvent, { type: 'ProtectedBranchCreated' }>[] {
  const p = existing(s);
  if (byName(p, rule.name)) throw new Conflict(`Protected branch '${rule.name}' already exists`);
  if (!rule.name.trim()) throw new RecordInvalid(["Name can't be blank"]);
  if (rule.name.length > MAX_PROTECTED_BRANCH_NAME)
    throw new RecordInvalid([`Name is too long (maximum is ${MAX_PROTECTED_BRANCH_NAME} characters)`]);
  return [{ type: 'ProtectedBranchCreated', data: { projectId: p.projectId, ...rule, at: now.toISOString() } }];
}

/**
 * `PATCH /projects/:id/protected_branches/:name` (later GitLab's update; Lode takes `allow_force_push`):
 * 404 `Not found` without a rule of that exact name; nothing changes: no event.
 */
export function updateProtectedBranch(
  s: ProjectRules,
  name: string,
  changes: { allowForcePush?: boolean },
  now: Date,
): ProtectedBranchEvent[] {
  const p = existing(s);
  const current = byName(p, name);
  if (!current) throw new NotFound();
  if (changes.allowForcePush === undefined || changes.allowForcePush === (current.allowForcePush ?? false)) return [];
  return [
    {
      type: 'ProtectedBranchUpdated',
      data: { projectId: p.projectId, name, allowForcePush: changes.allowForcePush, at: now.toISOString() },
    },
  ];
}

/** `DELETE /projects/:id/protected_branches/:name`: GitLab's `find_by!` miss is `404 Not found`. */
export function unprotectBranch(s: ProjectRules, name: string, now: Date): ProtectedBranchEvent[] {
  const p = existing(s);
  if (!byName(p, name)) throw new NotFound();
  return [{ type: 'ProtectedBranchRemoved', data: { projectId: p.projectId, name, at: now.toISOString() } }];
}

/**
 * `PUT .../repository/branches/:branch/protect` (GitLab's LegacyApiCreateService and
 * LegacyApiUpdateService): a flag set true means developer, false master; a new rule takes master for
 * a flag not given, an existing rule keeps that level. Nothing changes: no event.
 */
export function protectBranchLegacy(
  s: ProjectRules,
  name: string,
  flags: { developersCanPush?: boolean; developersCanMerge?: boolean },
  now: Date,
): ProtectedBranchEvent[] {
  const p = existing(s);
  const level = (flag: boolean | undefined) => (flag ? ACCESS.developer : ACCESS.maintainer);
  const current = byName(p, name);
  if (!current)
    return protectBranch(
      p,
      { name, pushAccessLevel: level(flags.developersCanPush), mergeAccessLevel: level(flags.developersCanMerge) },
      now,
    );
  const changes: { pushAccessLevel?: number; mergeAccessLevel?: number } = {};
  if (flags.developersCanPush !== undefined && level(flags.developersCanPush) !== current.pushAccessLevel)
    changes.pushAccessLevel = level(flags.developersCanPush);
  if (flags.developersCanMerge !== undefined && level(flags.developersCanMerge) !== current.mergeAccessLevel)
    changes.mergeAccessLevel = level(flags.developersCanMerge);
  if (!Object.keys(changes).length) return [];
  return [
    { type: 'ProtectedBranchUpdated', data: { projectId: p.projectId, name, ...changes, at: now.toISOString() } },
  ];
}

/** `PUT .../repository/branches/:branch/unprotect`: removes the rule of that exact name, if any (`&.destroy`). */
export function unprotectBranchLegacy(s: ProjectRules, name: string, now: Date): ProtectedBranchEvent[] {
  const p = existing(s);
  return byName(p, name) ? unprotectBranch(p, name, now) : [];
}

/** Folds one protected-branch event into the rules (creation order kept). */
export function evolveRules(rules: readonly ProtectedBranchRule[], e: ProtectedBranchEvent): ProtectedBranchRule[] {
  switch (e.type) {
    case 'ProtectedBranchCreated':
      return [
        ...rules,
        {
          name: e.data.name,
          pushAccessLevel: e.data.pushAccessLevel,
          mergeAccessLevel: e.data.mergeAccessLevel,
          ...(e.data.allowForcePush ? { allowForcePush: true } : {}),
        },
      ];
    case 'ProtectedBranchUpdated':
      return rules.map((r) =>
        r.name === e.data.name
          ? {
              ...r,
              pushAccessLevel: e.data.pushAccessLevel ?? r.pushAccessLevel,
              mergeAccessLevel: e.data.mergeAccessLevel ?? r.mergeAccessLevel,
              ...(e.data.allowForcePush === undefined ? {} : { allowForcePush: e.data.allowForcePush }),
            }
          : r,
      );
    case 'ProtectedBranchRemoved':
      return rules.filter((r) => r.name !== e.data.name);
  }
}
