import { FILTERED, redactHeaders, redactSecrets } from './redact';
import { RedactingLogger } from './redacting-logger';
import { Logs } from './log-output';

describe('redactSecrets', () => {
  const secret = 'glpat-abcDEF123_secret';
  const basic = Buffer.from(`git:${secret}`).toString('base64');

  it.each([
    [
      `GET /api/v4/projects?private_token=${secret}&page=2 failed`,
      `GET /api/v4/projects?private_token=${FILTERED}&page=2 failed`,
    ],
    [`GET /api/v4/user?page=1&PRIVATE_TOKEN=${secret}`, `GET /api/v4/user?page=1&PRIVATE_TOKEN=${FILTERED}`],
    [`POST /x?user%5Bpassword%5D=${secret}`, `POST /x?user%5Bpassword%5D=${FILTERED}`],
    [`headers: { 'PRIVATE-TOKEN': '${secret}' }`, `headers: { 'PRIVATE-TOKEN': '${FILTERED}' }`],
    [`PRIVATE-TOKEN: ${secret}`, `PRIVATE-TOKEN: ${FILTERED}`],
    [`{"token":"${secret}","url":"x"}`, `{"token":"${FILTERED}","url":"x"}`],
    [`X-Gitlab-Token: ${secret}`, `X-Gitlab-Token: ${FILTERED}`],
    [`{"signing_token":"whsec_MfKQ9r8G/KYq+rTwj="}`, `{"signing_token":"${FILTERED}"}`],
    [`key whsec_MfKQ9r8G/KYq+rTwj= given`, `key ${FILTERED} given`],
    [`authorization: Basic ${basic}`, `authorization: Basic ${FILTERED}`],
    [`Authorization: Bearer ${secret}`, `Authorization: Bearer ${FILTERED}`],
    [`sent Basic ${basic} along`, `sent Basic ${FILTERED} along`],
    [
      `connect https://alice:${secret}@hooks.example.com/x failed`,
      `connect https://${FILTERED}@hooks.example.com/x failed`,
    ],
    [`clone http://oauth2:${secret}@lode.test/g/p.git`, `clone http://${FILTERED}@lode.test/g/p.git`],
    [`password=${secret}&name=x`, `password=${FILTERED}&name=x`],
    [`clone https://${secret}@lode.test/g/p.git`, `clone https://${FILTERED}@lode.test/g/p.git`],
    [`database postgres://lode:${secret}@db:5432/lode`, `database postgres://lode:${FILTERED}@db:5432/lode`],
    [`queues redis://:${secret}@cache:6379`, `queues redis://:${FILTERED}@cache:6379`],
    [`ssh://git:${secret}@lode.test/g/p.git`, `ssh://git:${FILTERED}@lode.test/g/p.git`],
    [
      `git GET /g/p.git/info/refs?private_token=${secret}: Error`,
      `git GET /g/p.git/info/refs?private_token=${FILTERED}: Error`,
    ],
  ])('%s', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
    expect(redactSecrets(input)).not.toContain(secret);
  });

  it('keeps the account name of an SSH, database or Redis URL, which is no secret', () => {
    for (const text of [
      'ssh_url_to_repo ssh://git@lode.test:2222/g/p.git',
      'database postgres://postgres@127.0.0.1:5432/lode',
      'database postgresql://lode@db/lode',
    ])
      expect(redactSecrets(text)).toBe(text);
  });

  it('leaves ordinary text and stack traces alone', () => {
    const text = [
      'GET /api/v4/projects?page=2&per_page=20 failed (request abc-1)',
      'Error: boom',
      '    at TokenResolver.resolve (/app/dist/libs/users/src/queries/token-resolver.js:40:5)',
      'could not record activity of user 42: timeout',
      'tokens: 3',
    ].join('\n');
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('redactHeaders', () => {
  it('replaces credential headers and keeps the others', () => {
    expect(
      redactHeaders({
        authorization: 'Basic abc',
        'private-token': 'x',
        'x-gitlab-token': 'y',
        cookie: 'a=b',
        'content-type': 'application/json',
        referer: 'https://u:p@example.com/?private_token=z',
      }),
    ).toEqual({
      authorization: FILTERED,
      'private-token': FILTERED,
      'x-gitlab-token': FILTERED,
      cookie: FILTERED,
      'content-type': 'application/json',
      referer: `https://${FILTERED}@example.com/?private_token=${FILTERED}`,
    });
  });
});

describe('RedactingLogger', () => {
  it('filters every message and stack it prints', () => {
    const written: string[] = [];
    const stdout = process.stdout.write;
    const stderr = process.stderr.write;
    const capture = ((chunk: unknown) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    process.stdout.write = capture;
    process.stderr.write = capture;
    try {
      const logger = new RedactingLogger(['log', 'error']);
      logger.log('GET /x?private_token=s3cr3t-one', 'Test');
      logger.error('failed with Authorization: Bearer s3cr3t-two', 'Error: at https://u:s3cr3t-three@h/', 'Test');
    } finally {
      process.stdout.write = stdout;
      process.stderr.write = stderr;
    }
    const all = written.join('');
    expect(all).toContain(`private_token=${FILTERED}`);
    expect(all).not.toMatch(/s3cr3t/);
  });
});

describe('pino lines', () => {
  it('redact messages, fields named like credentials, nested strings and errors, in both formats', () => {
    const written: string[] = [];
    const stdout = process.stdout.write;
    process.stdout.write = ((chunk: unknown) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      for (const format of ['json', 'pretty'] as const) {
        Logs.configure('log', format);
        Logs.root.info(
          {
            token: 's3cr3t-one',
            nested: { url: 'https://u:s3cr3t-two@h/x' },
            err: new Error('PRIVATE-TOKEN: s3cr3t-three'),
          },
          'GET /x?private_token=s3cr3t-four',
        );
        Logs.root.debug({ password: 's3cr3t-five' }, 'below the level: not written');
      }
    } finally {
      process.stdout.write = stdout;
      Logs.configure('log', 'json');
    }
    const [json, pretty] = written;
    expect(written).toHaveLength(2);
    expect(JSON.parse(json)).toMatchObject({
      level: 'info',
      msg: `GET /x?private_token=${FILTERED}`,
      token: FILTERED,
      nested: { url: `https://${FILTERED}@h/x` },
    });
    expect(pretty).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET \/x\?private_token=\[FILTERED\] token=\[FILTERED\]/);
    expect(written.join('')).not.toMatch(/s3cr3t/);
  });
});
