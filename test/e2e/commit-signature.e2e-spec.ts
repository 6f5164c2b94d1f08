import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { expectShape } from '../contract/shape';
import { gitOk, tempDirs } from '../support/git';
import { runPython } from '../support/python-gitlab';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * GitLab 10.7's `GET /projects/:id/repository/commits/:sha/signature`: commits signed with throwaway
 * OpenPGP keys (the payload signed here, the object written with `git hash-object -t commit -w` and
 * pushed over git HTTP), checked against the keys users registered with `POST /user/gpg_keys`.
 */

/** git's empty tree. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

async function keyPair(name: string, email: string) {
  return openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name, email }], format: 'armored' });
}

/** A commit object's text without a signature. */
function payload(parent: string | undefined, email: string, message: string): string {
  const who = `Signer <${email}> 1700000000 +0000`;
  return `tree ${EMPTY_TREE}\n${parent ? `parent ${parent}\n` : ''}author ${who}\ncommitter ${who}\n\n${message}\n`;
}

/** `signed` with a detached signature over `over` (itself unless given) in a `gpgsig` header, as git writes it. */
async function signedObject(signed: string, armoredPrivateKey: string, over = signed): Promise<string> {
  const signingKey = await openpgp.readPrivateKey({ armoredKey: armoredPrivateKey });
  const signature = (await openpgp.sign({
    message: await openpgp.createMessage({ binary: Buffer.from(over, 'utf8') }),
    signingKeys: signingKey,
    detached: true,
    format: 'armored',
  })) as string;
  const header = `gpgsig ${signature.trimEnd().split('\n').join('\n ')}\n`;
  const at = signed.indexOf('\n\n');
  return `${signed.slice(0, at + 1)}${header}${signed.slice(at + 1)}`;
}

describe('GET /projects/:id/repository/commits/:sha/signature (GitLab 10.7)', () => {
  let t: TestApp;
  let url: string;
  let owner: SeededUser;
  let signer: SeededUser;
  let stranger: SeededUser;
  let guest: SeededUser;
  let pub: { id: number; path_with_namespace: string };
  let priv: { id: number; path_with_namespace: string };
  let work: string;
  const tmp = tempDirs();
  const sha: Record<string, string> = {};

  const get = (path: string, token?: string) => {
    const r = t.http().get(`/api/v4${path}`);
    return token ? r.set('PRIVATE-TOKEN', token) : r;
  };
  const signatureOf = (projectId: number, commit: string, token?: string) =>
    get(`/projects/${projectId}/repository/commits/${commit}/signature`, token);

  async function writeCommit(text: string): Promise<string> {
    const file = join(work, `object-${Object.keys(sha).length}-${Date.now()}`);
    writeFileSync(file, text);
    return (await gitOk(['hash-object', '-t', 'commit', '-w', file], work)).trim();
  }

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await createUser(t);
    signer = await createUser(t, { skip_confirmation: true });
    stranger = await createUser(t);
    guest = await createUser(t);
    const post = (path: string, body: object) =>
      t.http().post(`/api/v4${path}`).set('PRIVATE-TOKEN', owner.token).send(body);
    pub = (await post('/projects', { name: 'Signed', visibility: 'public' })).body;
    priv = (await post('/projects', { name: 'Signed secretly', visibility: 'private' })).body;
    expect((await post(`/projects/${priv.id}/members`, { user_id: guest.id, access_level: 10 })).status).toBe(201);

    const registered = await keyPair('Signer', signer.email);
    const unregistered = await keyPair('Nobody', 'nobody@example.com');
    const added = await t
      .http()
      .post('/api/v4/user/gpg_keys')
      .set('PRIVATE-TOKEN', signer.token)
      .send({ key: registered.publicKey });
    expect(added.status).toBe(201);
    sha.keyId = String(added.body[0].id);
    sha.keyid = (await openpgp.readKey({ armoredKey: registered.publicKey })).getKeyID().toHex().toUpperCase();
    sha.otherKeyid = (await openpgp.readKey({ armoredKey: unregistered.publicKey })).getKeyID().toHex().toUpperCase();

    work = tmp.make();
    await gitOk(['init', '-q', work]);
    expect((await gitOk(['hash-object', '-t', 'tree', '-w', '/dev/null'], work)).trim()).toBe(EMPTY_TREE);
    sha.unsigned = await writeCommit(payload(undefined, signer.email, 'unsigned'));
    sha.verified = await writeCommit(
      await signedObject(payload(sha.unsigned, signer.email, 'signed by a registered key'), registered.privateKey),
    );
    sha.unknown = await writeCommit(
      await signedObject(
        payload(sha.verified, signer.email, 'signed by a key nobody registered'),
        unregistered.privateKey,
      ),
    );
    sha.otherUser = await writeCommit(
      await signedObject(
        payload(sha.unknown, 'someone@example.com', 'committed as someone else'),
        registered.privateKey,
      ),
    );
    // The signer's secondary e-mail: the same user, not the key's e-mail.
    const second = await t
      .http()
      .post('/api/v4/user/emails')
      .set('PRIVATE-TOKEN', signer.token)
      .send({ email: `second-${signer.email}` });
    expect(second.status).toBe(201);
    sha.sameUser = await writeCommit(
      await signedObject(payload(sha.otherUser, `second-${signer.email}`, 'second e-mail'), registered.privateKey),
    );
    // The owner's primary e-mail was never confirmed (no skip_confirmation): the key holds no verified e-mail.
    const ownerKey = await keyPair('Owner', owner.email);
    const ownerAdded = await t
      .http()
      .post('/api/v4/user/gpg_keys')
      .set('PRIVATE-TOKEN', owner.token)
      .send({ key: ownerKey.publicKey });
    expect(ownerAdded.status).toBe(201);
    sha.unverifiedKey = await writeCommit(
      await signedObject(payload(sha.sameUser, owner.email, 'unconfirmed e-mail'), ownerKey.privateKey),
    );
    const tampered = payload(sha.unverifiedKey, signer.email, 'changed after signing');
    sha.bad = await writeCommit(
      await signedObject(tampered, registered.privateKey, tampered.replace('changed after', 'before')),
    );
    for (const p of [pub, priv]) {
      await gitOk(
        [
          'push',
          '-q',
          `${url.replace('//', `//git:${owner.token}@`)}/${p.path_with_namespace}.git`,
          `${sha.bad}:refs/heads/master`,
        ],
        work,
      );
    }
  });
  afterAll(async () => {
    tmp.removeAll();
    await t.close();
  });

  it('answers 404 Signature Not Found for an unsigned commit, 404 Commit Not Found for an unknown one', async () => {
    const unsigned = await signatureOf(pub.id, sha.unsigned);
    expect(unsigned.status).toBe(404);
    expect(unsigned.body).toEqual({ message: '404 Signature Not Found' });
    const unknown = await signatureOf(pub.id, 'f'.repeat(40));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Commit Not Found' });
  });

  it('verifies a commit signed by a registered key whose e-mail is the committer, also by an abbreviated id', async () => {
    const res = await signatureOf(pub.id, sha.verified);
    expect(res.status).toBe(200);
    expectShape(res.body, 'commit-signature');
    expect(res.body).toEqual({
      signature_type: 'PGP',
      gpg_key_id: Number(sha.keyId),
      gpg_key_primary_keyid: sha.keyid,
      gpg_key_user_name: 'Signer',
      gpg_key_user_email: signer.email,
      verification_status: 'verified',
      gpg_key_subkey_id: null,
      commit_source: 'gitaly',
    });
    const short = await signatureOf(pub.id, sha.verified.slice(0, 10));
    expect(short.body.verification_status).toBe('verified');
  });

  it('answers unknown_key, with no key or user, for a key nobody registered', async () => {
    const res = await signatureOf(pub.id, sha.unknown);
    expect(res.status).toBe(200);
    expectShape(res.body, 'commit-signature');
    expect(res.body).toEqual({
      signature_type: 'PGP',
      gpg_key_id: null,
      gpg_key_primary_keyid: sha.otherKeyid,
      gpg_key_user_name: null,
      gpg_key_user_email: null,
      verification_status: 'unknown_key',
      gpg_key_subkey_id: null,
      commit_source: 'gitaly',
    });
  });

  it('answers other_user, same_user_different_email, unverified_key (no verified e-mail) and unverified (a signature that does not match)', async () => {
    expect((await signatureOf(pub.id, sha.otherUser)).body).toMatchObject({
      gpg_key_id: Number(sha.keyId),
      verification_status: 'other_user',
    });
    expect((await signatureOf(pub.id, sha.sameUser)).body).toMatchObject({
      gpg_key_id: Number(sha.keyId),
      verification_status: 'same_user_different_email',
    });
    expect((await signatureOf(pub.id, sha.unverifiedKey)).body).toMatchObject({
      gpg_key_user_email: owner.email,
      verification_status: 'unverified_key',
    });
    expect((await signatureOf(pub.id, sha.bad)).body).toMatchObject({
      gpg_key_id: Number(sha.keyId),
      gpg_key_user_email: signer.email,
      verification_status: 'unverified',
    });
  });

  it('hides a private project from outsiders (404) and refuses its guests (403), as the other commit reads', async () => {
    const outsider = await signatureOf(priv.id, sha.verified, stranger.token);
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual({ message: '404 Project Not Found' });
    expect((await signatureOf(priv.id, sha.verified)).status).toBe(404);
    expect((await signatureOf(priv.id, sha.verified, guest.token)).status).toBe(403);
    const member = await signatureOf(priv.id, sha.verified, owner.token);
    expect(member.status).toBe(200);
    expect(member.body.verification_status).toBe('verified');
  });

  it("answers python-gitlab 3.12's commit.signature(), and its GitlabGetError 404 for an unsigned commit", async () => {
    const script = `
import json, sys, warnings
import gitlab
warnings.simplefilter("ignore")
url, token, project_id, signed, unsigned = sys.argv[1:6]
gl = gitlab.Gitlab(url, private_token=token)
project = gl.projects.get(int(project_id))
out = {"signature": project.commits.get(signed).signature()}
try:
    project.commits.get(unsigned).signature()
    out["unsigned"] = "no error"
except gitlab.exceptions.GitlabGetError as e:
    out["unsigned"] = [e.response_code, e.error_message]
print(json.dumps(out))
`;
    const out = JSON.parse(
      await runPython(script, [url, owner.token, String(priv.id), sha.verified, sha.unsigned]),
    ) as Record<string, unknown>;
    expect(out.signature).toMatchObject({ verification_status: 'verified', gpg_key_primary_keyid: sha.keyid });
    expect(out.unsigned).toEqual([404, '404 Signature Not Found']);
  });
});
