import { firstRow, rows } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { checkSignature, readCommitSignature } from '../domain/gpg-signature';

/** GitLab's GpgSignature verification statuses that a commit without system signing can have. */
export type GpgVerificationStatus =
  'verified' | 'unverified' | 'unverified_key' | 'same_user_different_email' | 'other_user' | 'unknown_key';

/** GitLab's GpgSignature record, as `GET .../commits/:sha/signature` shows it. */
export interface GpgCommitSignature {
  gpgKeyId: number | null;
  gpgKeyPrimaryKeyId: string;
  gpgKeyUserName: string | null;
  gpgKeyUserEmail: string | null;
  verificationStatus: GpgVerificationStatus;
  gpgKeySubkeyId: number | null;
}

/**
 * A commit's GPG signature checked against the keys users registered (`POST /user/gpg_keys`), as
 * GitLab's Gitlab::Gpg::Commit does: the key is found by the signature's issuer key ID (GitLab's
 * `find_gpg_key`; Lode keeps primary key IDs only, so a signature by a subkey finds no key), then
 * `unknown_key` without one, `unverified_key` when none of the key's e-mails is a verified e-mail of
 * its user, `unverified` when the signature does not verify, and by the committer's e-mail `verified`,
 * `same_user_different_email` or `other_user`.
 */
@Injectable()
export class CommitSignatures {
  constructor(private readonly dataSource: DataSource) {}

  /** Undefined when the signature is no OpenPGP signature openpgp reads (GitLab shows none then). */
  async verify(armored: string, signedData: Buffer, committerEmail: string): Promise<GpgCommitSignature | undefined> {
    const sig = await readCommitSignature(armored);
    if (!sig) return undefined;
    const key = await firstRow<{ id: number; userId: number; key: string; primaryKeyId: string }>(
      this.dataSource,
      `select id, user_id as "userId", key, primary_keyid as "primaryKeyId" from gpg_keys
        where primary_keyid = any($1::text[]) order by id limit 1`,
      [sig.issuerKeyIds],
    );
    if (!key) {
      return {
        gpgKeyId: null,
        gpgKeyPrimaryKeyId: sig.issuerKeyIds[0],
        gpgKeyUserName: null,
        gpgKeyUserEmail: null,
        verificationStatus: 'unknown_key',
        gpgKeySubkeyId: null,
      };
    }
    const { valid, userInfos } = await checkSignature(sig, signedData, key.key);
    const { verified, all } = await this.emailsOf(key.userId);
    const verifiedInfos = userInfos.filter((u) => verified.has(u.email));
    const info = verifiedInfos[0] ?? userInfos[0];
    const committer = committerEmail.toLowerCase();
    const status: GpgVerificationStatus = !verifiedInfos.length
      ? 'unverified_key'
      : !valid
        ? 'unverified'
        : verifiedInfos.some((u) => u.email === committer)
          ? 'verified'
          : all.has(committer)
            ? 'same_user_different_email'
            : 'other_user';
    return {
      gpgKeyId: key.id,
      gpgKeyPrimaryKeyId: key.primaryKeyId,
      gpgKeyUserName: info?.name ?? null,
      gpgKeyUserEmail: info?.email ?? null,
      verificationStatus: status,
      gpgKeySubkeyId: null,
    };
  }

  /**
   * The user's e-mails (lower-cased): the primary one is verified once confirmed; Lode's secondary
   * e-mails have no confirmation step, so they count as verified (GitLab's `skip_confirmation`).
   */
  private async emailsOf(userId: number): Promise<{ verified: Set<string>; all: Set<string> }> {
    const found = await rows<{ email: string; confirmed: boolean }>(
      this.dataSource,
      `select email, confirmed_at is not null as confirmed from users where id = $1
       union all select email, true from emails where user_id = $1`,
      [userId],
    );
    return {
      verified: new Set(found.filter((e) => e.confirmed).map((e) => e.email.toLowerCase())),
      all: new Set(found.map((e) => e.email.toLowerCase())),
    };
  }
}
