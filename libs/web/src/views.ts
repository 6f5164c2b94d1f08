import type { Branch, CommitInfo, FileDiff, Tag, TreeEntry } from '@app/git';
import type { ProjectRow, ReleaseRow } from '@app/projects';
import { html, pathUrl, type SafeHtml } from './html';
import { renderMarkdown } from './markdown';

/** How pages name a project in links: `/<namespace>/<project>`, each segment encoded. */
export const projectUrl = (p: ProjectRow): string => `/${pathUrl(`${p.ns_full_path}/${p.path}`)}`;
const date = (d: Date | string | null): string => (d ? new Date(d).toISOString().slice(0, 10) : '');

/** One project in a list: name (with its namespace), visibility, description, last activity. */
export function projectItem(p: ProjectRow): SafeHtml {
  return html`<li>
    <a href="${projectUrl(p)}">${p.ns_name} / ${p.name}</a>
    <span class="badge">${p.visibility}</span>
    ${p.description ? html`<span class="meta">${p.description}</span>` : ''}
    <span class="meta">Last activity ${date(p.last_activity_at)}</span>
  </li>`;
}

export function projectList(rows: ProjectRow[], empty: string): SafeHtml {
  return rows.length
    ? html`<ul class="list">
        ${rows.map(projectItem)}
      </ul>`
    : html`<p class="muted">${empty}</p>`;
}

/** Links to the previous and next page, keeping the other query parameters. */
export function pager(path: string, query: Record<string, string>, page: number, hasNext: boolean): SafeHtml {
  const link = (n: number) => {
    const q = new URLSearchParams({ ...query, page: String(n) });
    return `${path}?${q.toString()}`;
  };
  if (page <= 1 && !hasNext) return html``;
  return html`<nav class="pager" aria-label="Pages">
    ${page > 1 ? html`<a href="${link(page - 1)}" rel="prev">Previous</a>` : ''}
    <span class="muted">Page ${page}</span>
    ${hasNext ? html`<a href="${link(page + 1)}" rel="next">Next</a>` : ''}
  </nav>`;
}

export type ProjectTab = 'files' | 'commits' | 'branches' | 'tags' | 'releases';

/** The project's heading and tabs, on every page of a project. */
export function projectHeader(p: ProjectRow, ref: string | undefined, current: ProjectTab | undefined): SafeHtml {
  const base = projectUrl(p);
  const r = ref ? pathUrl(ref) : undefined;
  const tab = (name: ProjectTab, href: string, label: string) =>
    html`<a href="${href}" ${current === name ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<p class="crumbs">
      <a href="/${p.ns_kind === 'group' ? `groups/${pathUrl(p.ns_full_path)}` : pathUrl(p.ns_full_path)}"
        >${p.ns_full_name ?? p.ns_name}</a
      >
      /
    </p>
    <h1>
      <a href="${base}">${p.name}</a>
      <span class="badge">${p.visibility}</span>${p.archived ? html` <span class="badge">archived</span>` : ''}
    </h1>
    <nav class="tabs" aria-label="Project">
      ${tab('files', r ? `${base}/-/tree/${r}` : base, 'Files')}
      ${r ? tab('commits', `${base}/-/commits/${r}`, 'Commits') : ''}
      ${tab('branches', `${base}/-/branches`, 'Branches')} ${tab('tags', `${base}/-/tags`, 'Tags')}
      ${tab('releases', `${base}/-/releases`, 'Releases')}
    </nav>`;
}

/** Path crumbs of a tree or blob: each directory a link to its tree. */
export function pathCrumbs(p: ProjectRow, ref: string, path: string): SafeHtml {
  const base = `${projectUrl(p)}/-/tree/${pathUrl(ref)}`;
  const parts = path.split('/').filter(Boolean);
  return html`<p class="crumbs">
    <a href="${base}">${ref}</a>${parts.map(
      (part, i) =>
        html` /
        ${i === parts.length - 1 ? part : html`<a href="${base}/${pathUrl(parts.slice(0, i + 1).join('/'))}">${part}</a>`}`,
    )}
  </p>`;
}

/** A tree: directories, then files, then submodules (the order the port answers in). */
export function treeTable(p: ProjectRow, ref: string, path: string, entries: TreeEntry[]): SafeHtml {
  const base = projectUrl(p);
  const r = pathUrl(ref);
  const parent = path.split('/').filter(Boolean).slice(0, -1).join('/');
  const row = (e: TreeEntry) => {
    if (e.type === 'tree')
      return html`<tr>
        <td class="kind">dir</td>
        <td><a href="${base}/-/tree/${r}/${pathUrl(e.path)}">${e.name}/</a></td>
      </tr>`;
    if (e.type === 'blob')
      return html`<tr>
        <td class="kind">file</td>
        <td><a href="${base}/-/blob/${r}/${pathUrl(e.path)}">${e.name}</a></td>
      </tr>`;
    return html`<tr>
      <td class="kind">sub</td>
      <td>${e.name} <span class="muted">@ ${e.id.slice(0, 8)}</span></td>
    </tr>`;
  };
  return html`<table class="tree">
    <caption class="muted">
      ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}
    </caption>
    <tbody>
      ${
        path
          ? html`<tr>
              <td class="kind"></td>
              <td><a href="${base}/-/tree/${r}${parent ? `/${pathUrl(parent)}` : ''}">..</a></td>
            </tr>`
          : ''
      }
      ${entries.map(row)}
    </tbody>
  </table>`;
}

export function commitItem(p: ProjectRow, c: CommitInfo): SafeHtml {
  return html`<li>
    <a href="${projectUrl(p)}/-/commit/${c.id}">${c.title}</a>
    <span class="meta">${c.authorName} committed ${date(c.committedDate)} · <code>${c.shortId}</code></span>
  </li>`;
}

/** A commit's heading: title, message body, author, parents. */
export function commitHead(p: ProjectRow, c: CommitInfo): SafeHtml {
  const body = c.message.slice(c.message.indexOf('\n') + 1).trim();
  return html`<h2>${c.title}</h2>
    ${c.message.includes('\n') && body ? html`<pre>${body}</pre>` : ''}
    <p class="muted">
      ${c.authorName} authored ${date(c.authoredDate)} · commit
      <code>${c.id}</code>
      ${c.parentIds.map((id) => html` · parent <a href="${projectUrl(p)}/-/commit/${id}"><code>${id.slice(0, 8)}</code></a>`)}
    </p>`;
}

/** One file's diff, its lines marked as added, removed or hunk headers (text escaped, never highlighted as markup). */
export function fileDiff(d: FileDiff): SafeHtml {
  const name = d.renamedFile ? `${d.oldPath} → ${d.newPath}` : d.newPath;
  const state = d.newFile ? ' (new)' : d.deletedFile ? ' (deleted)' : '';
  const lines = d.diff.replace(/\n$/, '').split('\n');
  const line = (l: string) => {
    const kind = l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : '';
    return html`<span${kind ? html` class="${kind}"` : ''}>${l || ' '}</span>`;
  };
  return html`<section class="diff">
    <h3>${name}${state}</h3>
    ${d.diff ? html`<pre>${lines.map(line)}</pre>` : html`<p class="muted">No textual change (binary or mode only).</p>`}
  </section>`;
}

export function branchItem(p: ProjectRow, b: Branch, main: string | undefined): SafeHtml {
  return html`<li>
    <a href="${projectUrl(p)}/-/tree/${pathUrl(b.name)}">${b.name}</a>
    ${b.name === main ? html`<span class="badge">default</span>` : ''}
    <span class="meta"
      ><a href="${projectUrl(p)}/-/commit/${b.commit.id}"><code>${b.commit.shortId}</code></a> ${b.commit.title} ·
      ${date(b.commit.committedDate)}</span
    >
  </li>`;
}

export function tagItem(p: ProjectRow, t: Tag): SafeHtml {
  return html`<li>
    <a href="${projectUrl(p)}/-/tree/${pathUrl(t.name)}">${t.name}</a>
    <span class="meta"
      ><a href="${projectUrl(p)}/-/commit/${t.commit.id}"><code>${t.commit.shortId}</code></a>
      ${t.commit.title}${t.message ? ` · ${t.message.split('\n')[0]}` : ''}</span
    >
  </li>`;
}

export function releaseItem(p: ProjectRow, r: ReleaseRow): SafeHtml {
  return html`<li>
    <h3>${r.name}</h3>
    <span class="meta"
      >Tag <a href="${projectUrl(p)}/-/tree/${pathUrl(r.tagName)}">${r.tagName}</a> · released
      ${date(r.releasedAt)}</span
    >
    ${r.description ? html`<div class="readme">${renderMarkdown(r.description, { project: projectUrl(p), ref: r.tagName, dir: '' })}</div>` : ''}
  </li>`;
}
