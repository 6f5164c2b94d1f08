import { highlight } from './highlight';
import { renderMarkdown } from './markdown';

const base = { project: '/acme/tools', ref: 'feature/x', dir: 'docs' };

describe('renderMarkdown', () => {
  it('shows written HTML as text', () => {
    const out = renderMarkdown('<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>').value;
    expect(out).not.toMatch(/<script|<img/);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('links only to http(s), mailto and relative targets', () => {
    for (const url of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      'java\tscript:x',
    ])
      expect([url, renderMarkdown(`[a](${url})`).value]).not.toEqual([url, expect.stringContaining('<a ')]);
    expect(renderMarkdown('[a](https://example.com)').value).toContain(
      '<a href="https://example.com" rel="nofollow noreferrer noopener">',
    );
    expect(renderMarkdown('[a](mailto:a@example.com)').value).toContain('href="mailto:a@example.com"');
  });

  it('resolves relative links to blob pages and images to raw ones, at the same ref, never above the root', () => {
    const out = renderMarkdown(
      '[g](guide.md#top) [up](../README.md) [out](../../x) ![i](img/a%20b.png) [#](#here)',
      base,
    ).value;
    expect(out).toContain('href="/acme/tools/-/blob/feature/x/docs/guide.md#top"');
    expect(out).toContain('href="/acme/tools/-/blob/feature/x/README.md"');
    expect(out).toContain('href="../../x"');
    expect(out).toContain('src="/acme/tools/-/raw/feature/x/docs/img/a%20b.png"');
    expect(out).toContain('href="#here"');
  });
});

describe('highlight', () => {
  it('escapes the text it wraps, known language or not', () => {
    expect(highlight('const a = "<b>";', 'a.ts').value).toContain('&lt;b&gt;');
    expect(highlight('<b onclick="x">', 'notes').value).toBe('&lt;b onclick=&quot;x&quot;&gt;');
  });
});
