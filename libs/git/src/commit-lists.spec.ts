import { CommitIdList, CommitInfoCache, CommitListCache, commitInfoBytes } from './commit-lists';
import type { CommitInfo } from './git-repositories';

const id = (n: number) => n.toString(16).padStart(40, '0');
const list = (n: number) => CommitIdList.parse(Array.from({ length: n }, (_, i) => id(i)).join('\n') + '\n');

const info = (n: number, message = 'm'): CommitInfo => ({
  id: id(n),
  shortId: id(n).slice(0, 8),
  title: message,
  message,
  parentIds: [],
  authorName: 'a',
  authorEmail: 'a@example.com',
  authoredDate: '2020-01-01T00:00:00+00:00',
  committerName: 'a',
  committerEmail: 'a@example.com',
  committedDate: '2020-01-01T00:00:00+00:00',
});

describe('CommitIdList', () => {
  it('slices a page by position, empty past the end, from 40- or 64-character ids', () => {
    const l = list(250);
    expect(l.length).toBe(250);
    expect(l.bytes).toBe(250 * 40);
    expect(l.slice(0, 2)).toEqual([id(0), id(1)]);
    expect(l.slice(200, 100)).toEqual(Array.from({ length: 50 }, (_, i) => id(200 + i)));
    expect(l.slice(250, 100)).toEqual([]);
    expect(CommitIdList.parse('').length).toBe(0);
    expect(CommitIdList.parse('').slice(0, 10)).toEqual([]);
    const sha256 = CommitIdList.parse(`${'a'.repeat(64)}\n${'b'.repeat(64)}\n`);
    expect([sha256.length, sha256.slice(1, 5)]).toEqual([2, ['b'.repeat(64)]]);
  });
});

describe('CommitListCache', () => {
  it('shares one walk among callers, keeps lists within its bytes, least recently used out', async () => {
    const cache = new CommitListCache(40 * 1000);
    let walks = 0;
    const walk = (n: number) => () => {
      walks++;
      return Promise.resolve(list(n));
    };
    const [a, b] = await Promise.all([cache.get('a', walk(240)), cache.get('a', walk(240))]);
    expect(a).toBe(b);
    expect(walks).toBe(1);
    await cache.get('b', walk(240));
    await cache.get('c', walk(240));
    await cache.get('a', walk(240)); // used again: now the newest
    await cache.get('d', walk(240)); // four lists of 9.6 KB fit in 40 KB
    expect(walks).toBe(4);
    await cache.get('e', walk(240)); // a fifth does not: `b`, the least recently used, goes
    expect(walks).toBe(5);
    for (const key of ['a', 'c', 'd', 'e']) await cache.get(key, walk(240));
    expect(walks).toBe(5);
    await cache.get('b', walk(240));
    expect(walks).toBe(6);
    // maxIds: a quarter of the bytes.
    expect(cache.maxIds()).toBe(250);
  });

  it('keeps no list longer than a quarter of its bytes, nor a failed walk, nor anything at 0', async () => {
    const cache = new CommitListCache(40 * 1000);
    let walks = 0;
    const long = () => {
      walks++;
      return Promise.resolve(list(300));
    };
    await cache.get('long', long);
    await cache.get('long', long);
    expect(walks).toBe(2);
    await expect(cache.get('bad', () => Promise.reject(new Error('git failed')))).rejects.toThrow('git failed');
    expect(await cache.get('bad', () => Promise.resolve(list(1)))).toMatchObject({ length: 1 });
    const off = new CommitListCache(0);
    expect(off.maxIds()).toBe(0);
    await off.get('x', long);
    await off.get('x', long);
    expect(walks).toBe(4);
  });
});

describe('CommitInfoCache', () => {
  it('keeps commits by repository and id within its bytes', () => {
    const one = commitInfoBytes(info(0)) + `r\0${id(0)}`.length;
    const cache = new CommitInfoCache(one * 20);
    for (let i = 0; i < 30; i++) cache.set('r', info(i));
    // The 20 newest fit; the oldest went first.
    expect(cache.get('r', id(0))).toBeUndefined();
    expect(cache.get('r', id(29))).toEqual(info(29));
    expect(cache.get('other', id(29))).toBeUndefined();
    // One commit bigger than a sixteenth of the bound is not kept.
    cache.set('r', info(99, 'x'.repeat(one * 2)));
    expect(cache.get('r', id(99))).toBeUndefined();
    const off = new CommitInfoCache(0);
    off.set('r', info(1));
    expect(off.get('r', id(1))).toBeUndefined();
  });
});
