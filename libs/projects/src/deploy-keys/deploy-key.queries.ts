import { firstRow, NotFound, oneRow, rows, type Actor, type PageParams, type Sql } from '@app/platform';
import type { DeployKeyProjectLink, InstanceDeployKey } from '@app/users';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { DeployKeyLink } from '../access/project-access-policy';
import { authorizedProjectIdsSql } from '../access/project-access';

/** A deploy key as GitLab's SSHKey entity shows it. */
export interface DeployKeyRow {
  id: number;
  title: string;
  key: string;
  created_at: Date;
}

/** A key on one project: GitLab's DeployKeysProject entity (the key merged with the link's `can_push`). */
export interface ProjectDeployKeyRow extends DeployKeyRow {
  can_push: boolean;
}

/** What the SSH server needs of an offered key: who it is, who added it, where it may go. */
export interface DeployKeyGrant {
  id: number;
  title: string;
  /** The user who added it (a push is recorded as theirs, as GitLab's); null once that user is gone for good. */
  userId: number | null;
  /** Every project the key is enabled on, with that project's `can_push`. */
  projects: { projectId: number; canPush: boolean }[];
}

/** The key's link to one project, as `ProjectAccessPolicy`'s deploy-key decisions take it. */
export const deployKeyLink = (grant: DeployKeyGrant, projectId: number): DeployKeyLink => {
  const link = grant.projects.find((p) => p.projectId === projectId);
  return link ? { canPush: link.canPush } : undefined;
};

/** Ids are PostgreSQL `int`s: a larger one names no key (and must not reach the query). */
const MAX_ROW_ID = 2_147_483_647;

const KEY_COLUMNS = 'k.id, k.title, k.key, k.created_at';

/**
 * The keys a caller may reuse on another project (GitLab's `accessible_deploy_keys`): those enabled on
 * a project the caller is a member of, at any level, directly or through a group. `uid` names the
 * parameter holding the caller's id.
 */
const accessibleSql = (uid: string) =>
  `exists (select 1 from deploy_keys_projects a
            where a.deploy_key_id = k.id and a.project_id in ${authorizedProjectIdsSql(uid)})`;

/** Reads of deploy keys and their links; the commands' look-ups take the transaction they run in. */
@Injectable()
export class DeployKeyQueries {
  constructor(private readonly db: DataSource) {}

  /** `GET /deploy_keys`: every key, by id. */
  async all(page: PageParams): Promise<{ rows: DeployKeyRow[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(this.db, `select count(*)::int as total from deploy_keys`);
    const keys = await rows<DeployKeyRow>(
      this.db,
      `select ${KEY_COLUMNS} from deploy_keys k order by k.id offset $1 limit $2`,
      [page.offset, page.perPage],
    );
    return { rows: keys, total };
  }

  /** `GET /projects/:id/deploy_keys`: in the order the project got them. */
  async forProject(projectId: number, page: PageParams): Promise<{ rows: ProjectDeployKeyRow[]; total: number }> {
    const { total } = await oneRow<{ total: number }>(
      this.db,
      `select count(*)::int as total from deploy_keys_projects where project_id = $1`,
      [projectId],
    );
    const keys = await rows<ProjectDeployKeyRow>(
      this.db,
      `select ${KEY_COLUMNS}, l.can_push from deploy_keys_projects l join deploy_keys k on k.id = l.deploy_key_id
        where l.project_id = $1 order by l.created_at, l.deploy_key_id offset $2 limit $3`,
      [projectId, page.offset, page.perPage],
    );
    return { rows: keys, total };
  }

  /** The key as enabled on the project; GitLab's `find_by!` miss otherwise: `404 Not found`. */
  async inProject(projectId: number, keyId: number, db: Sql = this.db): Promise<ProjectDeployKeyRow> {
    const key = await firstRow<ProjectDeployKeyRow>(
      db,
      `select ${KEY_COLUMNS}, l.can_push from deploy_keys_projects l join deploy_keys k on k.id = l.deploy_key_id
        where l.project_id = $1 and l.deploy_key_id = $2`,
      [projectId, keyId],
    );
    if (!key) throw new NotFound();
    return key;
  }

  /** One key, whatever its projects (the answer of `POST .../enable`). */
  async get(keyId: number): Promise<DeployKeyRow> {
    const key = await firstRow<DeployKeyRow>(this.db, `select ${KEY_COLUMNS} from deploy_keys k where k.id = $1`, [
      keyId,
    ]);
    if (!key) throw new NotFound('Deploy Key');
    return key;
  }

  /**
   * The SSH server's look-up of an offered key by its `SHA256:...` fingerprint, and the projects it is
   * enabled on: one statement on the fingerprint's unique index and the links' primary key.
   */
  async byFingerprint(fingerprintSha256: string): Promise<DeployKeyGrant | undefined> {
    return firstRow<DeployKeyGrant>(
      this.db,
      `select k.id, k.title, k.user_id as "userId",
              coalesce((select json_agg(json_build_object('projectId', l.project_id, 'canPush', l.can_push)
                                        order by l.project_id)
                          from deploy_keys_projects l where l.deploy_key_id = k.id), '[]'::json) as projects
         from deploy_keys k where k.fingerprint_sha256 = $1`,
      [fingerprintSha256],
    );
  }

  /**
   * `GET /keys?fingerprint=` and `GET /keys/:id` (asked through users' `DeployKeyLookup`): the key by
   * its MD5 or SHA256 fingerprint or its id, who added it, and its links in the order they were made.
   */
  async ofInstance(by: { md5: string } | { sha256: string } | { id: number }): Promise<InstanceDeployKey | undefined> {
    if ('id' in by && by.id > MAX_ROW_ID) return undefined;
    const [match, value] =
      'md5' in by
        ? ['k.fingerprint = $1', by.md5]
        : 'sha256' in by
          ? ['k.fingerprint_sha256 = $1', by.sha256]
          : ['k.id = $1', by.id];
    const key = await firstRow<Omit<InstanceDeployKey, 'projects'>>(
      this.db,
      `select k.id, k.title, k.key, k.created_at as "createdAt", k.user_id as "userId" from deploy_keys k where ${match}`,
      [value],
    );
    if (!key) return undefined;
    const projects = await rows<DeployKeyProjectLink>(
      this.db,
      `select deploy_key_id as "deployKeyId", project_id as "projectId", can_push as "canPush",
              created_at as "createdAt", updated_at as "updatedAt"
         from deploy_keys_projects where deploy_key_id = $1 order by created_at, project_id`,
      [key.id],
    );
    return { ...key, projects };
  }

  /** The id of the key with this text already on the project, if any (GitLab answers it unchanged). */
  async idOnProject(db: EntityManager, projectId: number, key: string): Promise<number | undefined> {
    const row = await firstRow<{ id: number }>(
      db,
      `select k.id from deploy_keys k join deploy_keys_projects l on l.deploy_key_id = k.id
        where l.project_id = $1 and k.key = $2`,
      [projectId, key],
    );
    return row?.id;
  }

  /**
   * The id of a key the caller may reuse, found by its text (`POST .../deploy_keys`: GitLab asks
   * `accessible_deploy_keys` alone) or by its id (`POST .../enable`, where `adminReachesAll`: later
   * GitLab's `EnableDeployKeyService` lets administrators enable any key; 10.x gave them public keys,
   * which Lode does not have).
   */
  async accessibleId(
    db: EntityManager,
    actor: Actor,
    by: { key: string } | { id: number; adminReachesAll: boolean },
  ): Promise<number | undefined> {
    const [match, value] = 'key' in by ? ['k.key = $1', by.key] : ['k.id = $1', by.id];
    const anyKey = 'id' in by && by.adminReachesAll && actor.isAdmin;
    const row = await firstRow<{ id: number }>(
      db,
      `select k.id from deploy_keys k where ${match}${anyKey ? '' : ` and ${accessibleSql('$2')}`}`,
      anyKey ? [value] : [value, actor.id],
    );
    return row?.id;
  }

  /** Whether a deploy key has this md5 fingerprint (users' port asks it before adding a user's key). */
  async fingerprintTaken(db: EntityManager, fingerprint: string): Promise<boolean> {
    return (await firstRow(db, `select 1 from deploy_keys where fingerprint = $1`, [fingerprint])) !== undefined;
  }

  /** Which of these projects no longer exist (a key's stream still names them; their links went with them). */
  async goneProjectIds(db: EntityManager, projectIds: number[]): Promise<number[]> {
    const live = await rows<{ id: number }>(db, `select id from projects where id = any($1::int[])`, [projectIds]);
    const liveIds = new Set(live.map((p) => p.id));
    return projectIds.filter((id) => !liveIds.has(id));
  }
}
