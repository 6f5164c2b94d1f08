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
import { IsOptional, IsString } from 'class-validator';
import type { SshKeyRecord } from '../projections/credential.record';
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
 * with its owner (GitLab's SSHKeyWithUser: the key's fields and `user` as UserPublic). Deploy keys,
 * which GitLab's one `keys` table also holds (12.7's `deploy_keys_projects`), are not found here.
 */
@Controller('keys')
@ReadUserScope()
export class KeysController {
  constructor(
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
  ) {}

  @Get()
  @AdminOnly()
  async byFingerprint(@GitlabParams() q: FindKeyDto) {
    if (q.fingerprint === undefined) throw new BadParameter('fingerprint is missing');
    const key = await this.users.sshKeyByFingerprint(fingerprint(q.fingerprint));
    if (!key) throw new NotFound('Key');
    return this.withUser(key);
  }

  @Get(':id')
  @AdminOnly()
  async get(@Param('id', RouteIntPipe) id: number) {
    const key = await this.users.sshKeyById(id);
    // GitLab's `Key.find` raising RecordNotFound: the generic text, not "Key Not Found".
    if (!key) throw new NotFound();
    return this.withUser(key);
  }

  private async withUser(key: SshKeyRecord) {
    const user = await this.users.get(key.userId);
    const identities = (await this.users.identities([user.id])).get(user.id) ?? [];
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return { ...serializeSshKey(key), user: serializeUserPublic(user, identities, urls) };
  }
}

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
