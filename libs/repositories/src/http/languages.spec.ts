import { languageOf, languageShares } from './languages';

describe('language statistics', () => {
  it('names languages by extension or file name, leaving out vendored files, docs and prose', () => {
    expect(languageOf('src/app.ts')).toBe('TypeScript');
    expect(languageOf('lib/x.rb')).toBe('Ruby');
    expect(languageOf('Makefile')).toBe('Makefile');
    expect(languageOf('README.md')).toBeUndefined();
    expect(languageOf('node_modules/a/index.js')).toBeUndefined();
    expect(languageOf('docs/guide.js')).toBeUndefined();
    expect(languageOf('public/app.min.js')).toBeUndefined();
    expect(languageOf('.gitignore')).toBeUndefined();
  });

  it('answers shares of the counted bytes, largest first, to two decimals', () => {
    const shares = languageShares([
      { path: 'a.rb', size: 200 },
      { path: 'b.js', size: 100 },
      { path: 'c.rb', size: 100 },
      { path: 'README.md', size: 5000 },
      { path: 'empty.py', size: 0 },
    ]);
    expect(Object.entries(shares)).toEqual([
      ['Ruby', 75],
      ['JavaScript', 25],
    ]);
    expect(
      languageShares([
        { path: 'x.ts', size: 1 },
        { path: 'y.js', size: 2 },
      ]),
    ).toEqual({
      JavaScript: 66.67,
      TypeScript: 33.33,
    });
    expect(languageShares([])).toEqual({});
  });
});
