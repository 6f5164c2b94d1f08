// A namespace import, for the reason gpg-public-key.ts gives.
import * as openpgp from 'openpgp';

/**
 * A commit's OpenPGP signature, read and checked against one public key: what GitLab's
 * Gitlab::Gpg::Commit asks GPGME. Pure apart from openpgp: no I/O, no framework.
 */
export interface ReadSignature {
  signature: openpgp.Signature;
  /** Uppercase hex of the 64-bit key IDs the signature names as its issuer (usually one). */
  issuerKeyIds: string[];
}

/** The armored signature of a `gpgsig` header; undefined when openpgp cannot read it (an X.509 or SSH signature). */
export async function readCommitSignature(armored: string): Promise<ReadSignature | undefined> {
  try {
    const signature = await openpgp.readSignature({ armoredSignature: armored.replace(/\r\n?/g, '\n') });
    const issuerKeyIds = signature.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
    return issuerKeyIds.length ? { signature, issuerKeyIds } : undefined;
  } catch {
    return undefined;
  }
}

/** A user ID of a key: GitLab's `user_infos` (name and lower-cased e-mail). */
export interface GpgUserInfo {
  name: string;
  email: string;
}

export interface CheckedKey {
  /** Whether the signature over `data` verifies with this key (primary key or a subkey). */
  valid: boolean;
  userInfos: GpgUserInfo[];
}

/** Checks `sig` over the exact bytes `data` with the armored public key `armoredKey`. */
export async function checkSignature(sig: ReadSignature, data: Buffer, armoredKey: string): Promise<CheckedKey> {
  const key = await openpgp.readKey({ armoredKey });
  const userInfos = key.users
    .filter((u) => u.userID?.email)
    .map((u) => ({ name: u.userID?.name ?? '', email: (u.userID?.email ?? '').toLowerCase() }));
  return { valid: await verifies(sig, data, key), userInfos };
}

/** openpgp's `verified` rejects for a bad signature, or one by a key other than `key`. */
async function verifies(sig: ReadSignature, data: Buffer, key: openpgp.PublicKey): Promise<boolean> {
  try {
    const message = await openpgp.createMessage({ binary: new Uint8Array(data) });
    const { signatures } = await openpgp.verify({ message, signature: sig.signature, verificationKeys: key });
    return signatures.length > 0 && (await signatures[0].verified) === true;
  } catch {
    return false;
  }
}
