import { firstRow } from '@app/platform';
import type { EntityManager } from 'typeorm';

/**
 * One key text is either a user's key or a deploy key, never both (GitLab keeps both in one `keys`
 * table with one unique fingerprint). Deploy keys belong to the projects context, to the right of
 * users: it implements this port, so users never reads its tables.
 */
export abstract class DeployKeyFingerprints {
  /** Whether a deploy key has this md5 fingerprint, read in `db`'s transaction. */
  abstract taken(db: EntityManager, fingerprint: string): Promise<boolean>;
}

/**
 * Serialises every addition of a key with this fingerprint, user key or deploy key, until the
 * transaction ends. The two live in two tables, so no unique index spans them: without the lock, a
 * user key and a deploy key with the same fingerprint added at the same moment would each check the
 * other's table before the other committed, and both would pass. Both sides take this lock before
 * they check, so the second waits and then sees the first.
 */
export async function lockSshKeyFingerprint(db: EntityManager, fingerprint: string): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [`ssh-key-fingerprint:${fingerprint}`]);
}

/** Whether a user's SSH key has this md5 fingerprint: what the deploy keys' side checks, in its transaction. */
export async function userSshKeyFingerprintTaken(db: EntityManager, fingerprint: string): Promise<boolean> {
  return (await firstRow(db, `select 1 from ssh_keys where fingerprint = $1`, [fingerprint])) !== undefined;
}
