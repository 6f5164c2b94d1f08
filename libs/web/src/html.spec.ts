import { escapeHtml, html, pathUrl, trustedHtml } from './html';

describe('html', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const name = `<script>alert(1)</script>" onmouseover="x'`;
    expect(html`<a title="${name}">${name}</a>`.value).toBe(
      '<a title="&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;x&#39;">&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;x&#39;</a>',
    );
  });

  it('passes nested templates and trusted renderer output unescaped, arrays joined, nothing for null and false', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${[html`<br />`, 'a&b']}${null}${false}${undefined}${trustedHtml('<hr>')}</p>`.value).toBe(
      '<p><b>&lt;i&gt;</b><br />a&amp;b<hr></p>',
    );
  });

  it('does not take a look-alike object as safe', () => {
    expect(html`${{ value: '<x>' }}`.value).toBe('[object Object]');
    expect(escapeHtml('&amp;')).toBe('&amp;amp;');
  });

  it('encodes each path segment for a URL', () => {
    expect(pathUrl('a b/"><img src=x>/c?d#e')).toBe('a%20b/%22%3E%3Cimg%20src%3Dx%3E/c%3Fd%23e');
  });
});
