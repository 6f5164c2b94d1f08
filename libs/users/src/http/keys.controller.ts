import {
  AdminOnly,
  BadParameter,
  BadRequestMessage,
  GitlabParams,
  LodeConfig,
  NotFound,
  RouteIntPipe,
} from '@app/platform';
import { Controller, Get, Param } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { IsOptional, IsString } from 'class-validator';
import type { SshKeyRecord } from '../projections/credential.record';
import { DeployKeyLookup, type InstanceDeployKey } from '../queries/deploy-key-lookup';
import { UserQueries } from '../queries/user.queries';
import { serializeSshKey } from './credential.serializer';
import { ReadUserScope } from './private-token.guard';
import { serializeUserPublic } from './user.serializer';

export class FindKeyDto {
  @IsOptional() @IsString() fingerprint?: string;
}

/** GitLab's KeysFinder: an MD5 fingerprint is colon-separated hex, checked from the start only. */
const MD5 = /^([0-9a-f]{2}:){15}[0-9a-f]{2}/i;

/**
 * `GET /keys/:id` (8.x) and `GET /keys?fingerprint=` (11.x): an administrator finds any user's SSH key
 * with its owner (GitLab's SSHKeyWithUser: the key's fields and `user` as UserPublic). GitLab's one
 * `keys` table also holds deploy keys, so a key not among users' keys is asked of the projects context
 * through `DeployKeyLookup`: by fingerprint it answers GitLab 12.7's DeployKeyWithUser (the user who
 * added it, and `deploy_keys_projects`), by id SSHKeyWithUser, as GitLab's `Key.find`. Users' keys and
 * deploy keys count their ids apart, so a deploy key whose id is also a user's key's is found by
 * fingerprint only.
 */
@Controller('keys')
@ReadUserScope()
export class KeysController {
  constructor(
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * The projects context provides the port from a module that imports this one, so it is looked up
   * across the application; a Lode without projects has no deploy keys to find.
   */
  private deployKeys(): DeployKeyLookup | undefined {
    try {
      return this.moduleRef.get(DeployKeyLookup, { strict: false });
    } catch {
      return undefined;
    }
  }

  @Get()
  @AdminOnly()
  async byFingerprint(@GitlabParams() q: FindKeyDto) {
    if (q.fingerprint === undefined) throw new BadParameter('fingerprint is missing');
    const wanted = fingerprint(q.fingerprint);
    const key = await this.users.sshKeyByFingerprint(wanted);
    if (key) return this.withUser(key);
    const deployKey = await this.deployKeys()?.byFingerprint(
      'md5' in wanted ? { md5: wanted.md5.toLowerCase() } : wanted,
    );
    if (!deployKey) throw new NotFound('Key');
    return { ...(await this.deployKeyWithUser(deployKey)), deploy_keys_projects: deployKeyProjects(deployKey) };
  }

  @Get(':id')
  @AdminOnly()
  async get(@Param('id', RouteIntPipe) id: number) {
    const key = await this.users.sshKeyById(id);
    if (key) return this.withUser(key);
    const deployKey = await this.deployKeys()?.byId(id);
    // GitLab's `Key.find` raising RecordNotFound: the generic text, not "Key Not Found".
    if (!deployKey) throw new NotFound();
    return this.deployKeyWithUser(deployKey);
  }

  private async withUser(key: SshKeyRecord) {
    const user = await this.users.get(key.userId);
    const identities = (await this.users.identities([user.id])).get(user.id) ?? [];
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return { ...serializeSshKey(key), user: serializeUserPublic(user, identities, urls) };
  }

  /** A deploy key as SSHKeyWithUser: it has no expiry, and `user` is null once its adder is gone. */
  private async deployKeyWithUser(key: InstanceDeployKey) {
    const user = key.userId === null ? null : await this.users.find(key.userId);
    const identities = user ? ((await this.users.identities([user.id])).get(user.id) ?? []) : [];
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return {
      id: key.id,
      title: key.title,
      key: key.key,
      created_at: key.createdAt.toISOString(),
      expires_at: null,
      user: user ? serializeUserPublic(user, identities, urls) : null,
    };
  }
}

/**
 * GitLab's `deploy_keys_projects`, the link rows as they are (no entity). Lode's links are keyed by
 * key and project and have no `id` of their own, so that one column of GitLab's rows is not shown.
 */
const deployKeyProjects = (key: InstanceDeployKey) =>
  key.projects.map((l) => ({
    deploy_key_id: l.deployKeyId,
    project_id: l.projectId,
    created_at: l.createdAt.toISOString(),
    updated_at: l.updatedAt.toISOString(),
    can_push: l.canPush,
  }));

/**
 * GitLab's KeysFinder: `SHA256:` (either case) and 32 bytes of base64, or an MD5 fingerprint; anything
 * else is 400 `Failed to return the key`. GitLab's documentation asks clients to URL-encode the
 * fingerprint; gitbeaker does not, so a `+` of the base64 arrives as a space and is read back as `+`.
 */
function fingerprint(value: string): { md5: string } | { sha256: string } {
  const sha = /^sha256:(.*)$/i.exec(value);
  if (sha) {
    const base64 = sha[1].replace(/ /g, '+').replace(/=+$/, '');
    if (!/^[A-Za-z0-9+/]+$/.test(base64) || Buffer.from(base64, 'base64').length !== 32)
      throw new BadRequestMessage('Failed to return the key');
    return { sha256: `SHA256:${base64}` };
  }
  const md5 = MD5.exec(value);
  if (!md5) throw new BadRequestMessage('Failed to return the key');
  return { md5: md5[0] };
}
