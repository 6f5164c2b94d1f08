import { Invalid } from '@app/platform';
import { parseSshPublicKey, SshKeyError, type ParsedSshKey } from '@app/users';

export const deployKeyStream = (keyId: number) => `deploy-key-${keyId}`;

/** The nested model's errors, as GitLab words them (see deploy-key.ts). */
export const TAKEN = { 'deploy_key.fingerprint': ['has already been taken'] };

/** GitLab's Key model: the format check fails and no fingerprint can be computed. */
export function parse(key: string): ParsedSshKey {
  try {
    return parseSshPublicKey(key);
  } catch (err) {
    if (!(err instanceof SshKeyError)) throw err;
    throw new Invalid({ 'deploy_key.key': ['is invalid'], 'deploy_key.fingerprint': ['cannot be generated'] });
  }
}
