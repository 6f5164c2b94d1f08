import { namespacePathErrors, PATH_FORMAT_MESSAGE, RESERVED_TOP_LEVEL } from './namespace-path';

describe('namespacePathErrors', () => {
  it.each([
    'a',
    'A',
    '0',
    '_',
    'jane',
    'Jane_Doe',
    'jane-doe',
    'jane.doe',
    'j.a.n.e',
    '_jane',
    '1337',
    'jane-',
    'jane_',
    'jane.gitx',
    'gitlab.git1',
    'atom',
  ])('accepts %j', (path) => {
    expect(namespacePathErrors(path, true)).toEqual([]);
  });

  it('says blank, and nothing else, for an empty path', () => {
    expect(namespacePathErrors('', true)).toEqual(["can't be blank"]);
    expect(namespacePathErrors('', false)).toEqual(["can't be blank"]);
  });

  it.each([
    '-jane',
    '.jane',
    'jane.',
    'jane..',
    'jane.git',
    'jane.GIT',
    'jane.atom',
    'jane.Atom',
    'ja ne',
    'jane/doe',
    'jane@doe',
    'jané',
    'jane\n',
    '.git',
  ])('gives the format message for %j', (path) => {
    expect(namespacePathErrors(path, true)).toEqual([PATH_FORMAT_MESSAGE]);
  });

  it('allows 255 characters and refuses 256', () => {
    expect(namespacePathErrors('a'.repeat(255), true)).toEqual([]);
    expect(namespacePathErrors('a'.repeat(256), true)).toEqual(['is too long (maximum is 255 characters)']);
  });

  it('gives every message that applies', () => {
    expect(namespacePathErrors(`${'a'.repeat(256)}.git`, true)).toEqual([
      'is too long (maximum is 255 characters)',
      PATH_FORMAT_MESSAGE,
    ]);
  });

  it.each([
    'admin',
    'api',
    'users',
    'groups',
    'projects',
    'help',
    'explore',
    'dashboard',
    'uploads',
    'root-ghost',
    'robots.txt',
    's',
    'u',
  ])('refuses the reserved top-level name %j', (path) => {
    expect(namespacePathErrors(path, true)).toEqual([`${path} is a reserved name`]);
  });

  it('matches reserved names without regard to case, quoting the path as given', () => {
    expect(namespacePathErrors('Admin', true)).toEqual(['Admin is a reserved name']);
    expect(namespacePathErrors('API', true)).toEqual(['API is a reserved name']);
  });

  it('gives both messages for a reserved name that is also malformed', () => {
    expect(namespacePathErrors('-', true)).toEqual([PATH_FORMAT_MESSAGE, '- is a reserved name']);
    expect(namespacePathErrors('.well-known', true)).toEqual([PATH_FORMAT_MESSAGE, '.well-known is a reserved name']);
  });

  it('lets a nested path take a reserved top-level name', () => {
    expect(namespacePathErrors('admin', false)).toEqual([]);
    expect(namespacePathErrors('api', false)).toEqual([]);
  });

  it('still checks the format of a nested path', () => {
    expect(namespacePathErrors('sub.git', false)).toEqual([PATH_FORMAT_MESSAGE]);
  });

  it('does not reserve prefixes or longer names', () => {
    expect(namespacePathErrors('admins', true)).toEqual([]);
    expect(namespacePathErrors('api2', true)).toEqual([]);
    expect(namespacePathErrors('my-users', true)).toEqual([]);
  });

  it('keeps the reserved names in lower case, so the lookup can lower-case the path', () => {
    for (const name of RESERVED_TOP_LEVEL) expect(name).toBe(name.toLowerCase());
  });
});
