import { assertNever, FieldErrors, NotFound, type Decider } from '@app/platform';

/*
 * A deploy key. Stream `deploy-key-<id>`: the key itself (title, fingerprints, who added it) and the
 * projects it is enabled on, each link with its own `can_push`.
 *
 * Why the key's own stream and not the project's: in GitLab a deploy key is ONE record shared by
 * every project that enables it. Its title is the key's (renaming it through one project renames it
 * on all of them), and the key is deleted when its last project lets it go. Both rules span all the
 * key's links, so the links live with the key: an enable on one project and a removal on another
 * are serialised on one stream, and the last removal knows it is the last. Nothing decided about a
 * key needs the project's state, and a project with many keys does not serialise its keys' changes.
 *
 * A project's deletion (its own `ProjectDeleted`, or its group's cascade, which has no per-project
 * event) takes its links away in the read model, as GitLab's `dependent: :destroy`; the key's stream
 * does not hear of it. So a decision that counts links (the last removal) is told which of the
 * stream's projects are gone, and the projector drops a key left with no link.
 */

/** GitLab's `Key` validation: the title is required and at most 255 characters. */
export const TITLE_MAX = 255;

/** What a new key carries, parsed by the users context's SSH key parser. */
export interface NewDeployKey {
  keyId: number;
  projectId: number;
  /** Who added it: the user a push through the key is recorded as (GitLab's `deploy_key.user`). */
  userId: number;
  title: string;
  key: string;
  keyType: string;
  /** md5, GitLab 10.x's `fingerprint`: unique among user and deploy keys alike. */
  fingerprint: string;
  /** `SHA256:...`, what the SSH server looks a key up by. */
  fingerprintSha256: string;
  canPush: boolean;
}

export type DeployKeyEvent =
  | { type: 'DeployKeyAdded'; data: NewDeployKey & { at: string } }
  // An existing key enabled on one more project (`POST .../enable`, or `POST .../deploy_keys` with its text).
  | { type: 'DeployKeyEnabled'; data: { keyId: number; projectId: number; canPush: boolean; at: string } }
  // Through one project: `title` changes the key everywhere, `canPush` only this project's link.
  | {
      type: 'DeployKeyUpdated';
      data: { keyId: number; projectId: number; title?: string; canPush?: boolean; at: string };
    }
  | { type: 'DeployKeyDisabled'; data: { keyId: number; projectId: number; at: string } }
  // The last project let it go: GitLab destroys a private deploy key once orphaned.
  | { type: 'DeployKeyRemoved'; data: { keyId: number; at: string } };

export type DeployKey =
  { exists: false } | { exists: true; keyId: number; title: string; links: Record<number, { canPush: boolean }> };

export const initial = (): DeployKey => ({ exists: false });

export function evolve(s: DeployKey, e: DeployKeyEvent): DeployKey {
  switch (e.type) {
    case 'DeployKeyAdded':
      return {
        exists: true,
        keyId: e.data.keyId,
        title: e.data.title,
        links: { [e.data.projectId]: { canPush: e.data.canPush } },
      };
    case 'DeployKeyEnabled':
      return s.exists ? { ...s, links: { ...s.links, [e.data.projectId]: { canPush: e.data.canPush } } } : s;
    case 'DeployKeyUpdated': {
      if (!s.exists) return s;
      const link = s.links[e.data.projectId];
      return {
        ...s,
        title: e.data.title ?? s.title,
        links:
          link && e.data.canPush !== undefined
            ? { ...s.links, [e.data.projectId]: { canPush: e.data.canPush } }
            : s.links,
      };
    }
    case 'DeployKeyDisabled': {
      if (!s.exists) return s;
      const links = { ...s.links };
      delete links[e.data.projectId];
      return { ...s, links };
    }
    case 'DeployKeyRemoved':
      return { exists: false };
    default:
      return assertNever(e);
  }
}

export const deployKeyDecider: Decider<DeployKey, DeployKeyEvent> = { initial, evolve };

/**
 * GitLab answers the nested model's errors under `deploy_key.<field>`: the API saves a
 * DeployKeysProject with `deploy_key_attributes`, and Rails names an autosaved association's errors so.
 */
function checkTitle(title: string, errors: FieldErrors): void {
  if (!title.trim()) errors.add('deploy_key.title', "can't be blank");
  else if (title.length > TITLE_MAX) errors.add('deploy_key.title', `is too long (maximum is ${TITLE_MAX} characters)`);
}

/** A new key with its first project. */
export function add(s: DeployKey, key: NewDeployKey, now: Date): DeployKeyEvent[] {
  if (s.exists) throw new Error(`deploy key ${key.keyId} exists already`); // ids come from a sequence
  const errors = new FieldErrors();
  checkTitle(key.title, errors);
  errors.throwIfAny();
  return [{ type: 'DeployKeyAdded', data: { ...key, at: now.toISOString() } }];
}

/**
 * Enables the key on one more project. Already enabled there: nothing changes, `can_push` included
 * (GitLab answers the existing link as it is).
 */
export function enable(s: DeployKey, projectId: number, canPush: boolean, now: Date): DeployKeyEvent[] {
  if (!s.exists) throw new NotFound('Deploy Key');
  if (s.links[projectId]) return [];
  return [{ type: 'DeployKeyEnabled', data: { keyId: s.keyId, projectId, canPush, at: now.toISOString() } }];
}

/**
 * `PUT /projects/:id/deploy_keys/:key_id`. A key not enabled on the project is ActiveRecord's miss
 * (`404 Not found`, from `find_by!`). Values equal to the present ones are no change.
 */
export function update(
  s: DeployKey,
  projectId: number,
  changes: { title?: string; canPush?: boolean },
  now: Date,
): DeployKeyEvent[] {
  if (!s.exists || !s.links[projectId]) throw new NotFound();
  const errors = new FieldErrors();
  if (changes.title !== undefined) checkTitle(changes.title, errors);
  errors.throwIfAny();
  const data: Extract<DeployKeyEvent, { type: 'DeployKeyUpdated' }>['data'] = {
    keyId: s.keyId,
    projectId,
    at: now.toISOString(),
  };
  if (changes.title !== undefined && changes.title !== s.title) data.title = changes.title;
  if (changes.canPush !== undefined && changes.canPush !== s.links[projectId].canPush) data.canPush = changes.canPush;
  return data.title === undefined && data.canPush === undefined ? [] : [{ type: 'DeployKeyUpdated', data }];
}

/**
 * Removes the key from one project (GitLab 10.6.6: from that project only, no longer the key
 * itself). When no other project still has it, the key goes too (GitLab 10.x's
 * `destroy_orphaned_deploy_key`). `goneProjectIds` are the stream's projects deleted since: they no
 * longer hold the key.
 */
export function disable(s: DeployKey, projectId: number, goneProjectIds: number[], now: Date): DeployKeyEvent[] {
  if (!s.exists || !s.links[projectId]) throw new NotFound('Deploy Key');
  const at = now.toISOString();
  const events: DeployKeyEvent[] = [{ type: 'DeployKeyDisabled', data: { keyId: s.keyId, projectId, at } }];
  const others = Object.keys(s.links)
    .map(Number)
    .filter((id) => id !== projectId && !goneProjectIds.includes(id));
  if (others.length === 0) events.push({ type: 'DeployKeyRemoved', data: { keyId: s.keyId, at } });
  return events;
}
