import { archiveExtension, GitRepositories, projectRepo, type CommitInfo, type RepoRef } from '@app/git';
import { NamespaceAccess, GroupQueries } from '@app/groups';
import { buildRevision, Forbidden, labelRoute, LodeConfig, NotFound, RequestContexts, type Actor } from '@app/platform';
import { ProjectAccessPolicy, ProjectQueries, ReleaseQueries, type ProjectRow } from '@app/projects';
import { sendArchive, sendRawBlob } from '@app/repositories';
import { UserQueries, WebSessions } from '@app/users';
import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { createHash, randomBytes } from 'node:crypto';
import { ASSETS, COPY_SCRIPT, STYLESHEET } from './assets';
import { highlight } from './highlight';
import { html, pathUrl, type SafeHtml } from './html';
import { notFoundPage, page, PAGE_CSP, type PageFrame } from './layout';
import { renderMarkdown } from './markdown';
import { SessionCookies } from './session-cookies';
import { signInPage } from './sign-in';
import {
  branchItem,
  commitHead,
  commitItem,
  fileDiff,
  pager,
  pathCrumbs,
  projectHeader,
  projectList,
  projectUrl,
  releaseItem,
  tagItem,
  treeTable,
} from './views';

/**
 * What a route answers: a page, a redirect (301 for a moved page; 302 where GitLab sends one, as for
 * a release asset), or nothing (the same 404 for missing and not visible).
 */
type Answer =
  | { page: SafeHtml; etag?: string }
  | { notModified: string }
  | { redirect: string; status?: 302 }
  | { sent: true }
  | undefined;

/**
 * The `/-/<action>` paths of a project (GitLab's), each with the route template its requests are
 * counted under in the metrics (a project's path or a ref is never a label value).
 */
const PROJECT_ACTIONS: Record<string, string> = {
  tree: '/*project/-/tree/*ref_path',
  blob: '/*project/-/blob/*ref_path',
  raw: '/*project/-/raw/*ref_path',
  commits: '/*project/-/commits/*ref_path',
  commit: '/*project/-/commit/:sha',
  branches: '/*project/-/branches',
  tags: '/*project/-/tags',
  releases: '/*project/-/releases',
  archive: '/*project/-/archive/*ref/:filename',
};
/** Old GitLab forms without `/-/` (push hooks still write `<web_url>/commit/<sha>`): redirected to the `/-/` form. */
const OLD_ACTIONS = new Set(['tree', 'blob', 'raw', 'commits', 'commit', 'branches', 'tags']);
const PER_PAGE = 20;
const LIST_TITLES = { branches: 'Branches', tags: 'Tags', releases: 'Releases' } as const;
const LIST_PAGE = 50;
/** A file larger than this is offered as a download, not shown. */
const MAX_SHOWN_BYTES = 1024 * 1024;
const README = /^readme(\.(md|markdown|txt|rst))?$/i;
const MARKDOWN = /\.(md|markdown)$/i;
/** Images a browser shows from bytes alone, never running anything; SVG is not among them (it can hold script). */
const RASTER: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
};
const rasterType = (name: string): string | undefined => RASTER[name.slice(name.lastIndexOf('.') + 1).toLowerCase()];

/**
 * Paths the pages never answer: the API, git, uploads, avatars and the `/-/` endpoints of the
 * operations side, so a page never shadows them; `..` and `.` segments are left to the JSON 404.
 * A segment may hold an encoded slash: the release URLs the API writes encode the tag as one
 * segment (`/-/archive/rel%2F2/...`), and each of its parts is checked as a segment is.
 */
function webSegments(path: string): string[] | undefined {
  if (path === '/') return [];
  if (/^\/(api|uploads|-)(\/|$)/.test(path)) return undefined;
  if (/\/uploads\/[^/]+\/[^/]+$/.test(path)) return undefined;
  const raw = path.slice(1).replace(/\/$/, '').split('/');
  const segments: string[] = [];
  for (const s of raw) {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      return undefined;
    }
    if (d.split('/').some((p) => p === '' || p === '.' || p === '..' || p.endsWith('.git'))) return undefined;
    segments.push(d);
  }
  return segments;
}

/**
 * What an immutable page's ETag depends on besides what it shows: the code that renders it. A build
 * whose revision is unknown (an image run without LODE_REVISION) counts as its own, so an upgrade
 * never answers 304 for markup an older Lode made; its processes then only share fewer 304s.
 */
const RENDERER = [
  buildRevision() === 'unknown' ? randomBytes(8).toString('hex') : buildRevision(),
  STYLESHEET.path,
  COPY_SCRIPT.path,
].join('\0');

/** `If-None-Match` (a list, `*`, weak tags compared weakly as RFC 9110 says) against the page's ETag. */
function ifNoneMatch(req: Request, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

const queryString = (v: unknown): string => (typeof v === 'string' ? v : '');
const pageNumber = (v: unknown): number => {
  const n = Number(queryString(v));
  return Number.isInteger(n) && n > 0 && n <= 100_000 ? n : 1;
};

/**
 * The read-only web pages at GitLab's paths, so every `web_url` the API writes leads somewhere:
 * projects, their files, commits, branches, tags and releases, groups and users. Visibility is the
 * API's: the same queries (ProjectQueries, NamespaceAccess, GroupQueries) and the same policy decide,
 * for the session's user or for an anonymous visitor; what one may not see answers the same 404 as
 * what does not exist. Nothing here changes anything but a session.
 */
@Injectable()
export class WebPages {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly users: UserQueries,
    private readonly releases: ReleaseQueries,
    private readonly git: GitRepositories,
    private readonly sessions: WebSessions,
    private readonly cookies: SessionCookies,
    private readonly config: LodeConfig,
  ) {}

  /** The Express middleware: answers the pages, passes everything else on. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    this.dispatch(req, res, next).catch((err: unknown) => next(err));
  };

  private async dispatch(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (req.method === 'POST') {
      if (req.path === '/users/sign_in' || req.path === '/users/sign_out') labelRoute(req, req.path);
      if (req.path === '/users/sign_in') return this.cookies.signIn(req, res);
      if (req.path === '/users/sign_out') return this.cookies.signOut(req, res);
      return next();
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const asset = ASSETS.get(req.path);
    if (asset) {
      labelRoute(req, '/-/assets/:file');
      res.status(200).type(asset.type).setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      return void res.end(req.method === 'HEAD' ? undefined : asset.body);
    }
    const segments = webSegments(req.path);
    if (!segments) return next();
    const actor = await this.cookies.actorOf(req, res);
    const ctx = RequestContexts.current();
    if (ctx && actor) ctx.actor = actor;
    const frame: PageFrame = { actor, path: req.originalUrl };
    let answer: Answer;
    try {
      answer = await this.route(segments, req, res, frame);
    } catch (err) {
      // Not visible and not there are one answer; so is code the caller may not read.
      if (!(err instanceof NotFound || err instanceof Forbidden)) throw err;
      answer = undefined;
    }
    if (answer && 'sent' in answer) return;
    this.headers(res, actor);
    if (answer && 'notModified' in answer) {
      res.setHeader('ETag', answer.notModified);
      return void res.status(304).end();
    }
    if (answer && 'redirect' in answer) return void res.redirect(answer.status ?? 301, answer.redirect);
    if (!answer) {
      // A browser gets the page; a client that asked for no HTML keeps the API's JSON 404 for unknown
      // paths (counted as the API's other unrouted requests are).
      if (!(req.headers.accept ?? '').includes('text/html')) {
        labelRoute(req, undefined);
        return next();
      }
      return this.send(res, 404, notFoundPage(frame));
    }
    if (answer.etag) res.setHeader('ETag', answer.etag);
    this.send(res, 200, answer.page);
  }

  /**
   * A strong ETag for a blob, tree or commit page addressed by a full commit id, whose content cannot
   * change: derived from the commit, the page's URL, the viewer (anonymous, or the signed-in user's
   * id and the username the page shows), the project's header and the renderer. Undefined for a page
   * addressed by a branch or tag. Only asked once the viewer's access is checked, so a 304 never tells
   * anyone what a 404 would hide; an anonymous page is public, and a signed-in one stays
   * `private, no-store`, so nothing private is kept for another user.
   */
  private immutableEtag(project: ProjectRow, ref: string, commitId: string, frame: PageFrame): string | undefined {
    if (ref !== commitId) return undefined;
    const viewer = frame.actor ? `user:${frame.actor.id}:${frame.actor.username}` : 'anonymous';
    const header = [
      project.id,
      project.name,
      project.path,
      project.ns_full_path,
      project.ns_full_name,
      project.ns_name,
      project.ns_kind,
      project.visibility,
      project.archived,
    ].join('\0');
    const limits = [this.config.compareMaxFiles, this.config.compareMaxLines, this.config.compareMaxBytes].join('\0');
    const digest = createHash('sha256')
      .update([RENDERER, limits, header, commitId, frame.path, viewer].join('\n'))
      .digest('hex');
    return `"${digest.slice(0, 32)}"`;
  }

  private headers(res: Response, actor: Actor | undefined): void {
    res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('Vary', 'Cookie');
    res.setHeader('Cache-Control', actor ? 'private, no-store' : 'no-cache');
  }

  private send(res: Response, status: number, body: SafeHtml): void {
    res.status(status).type('text/html; charset=utf-8');
    res.end(res.req.method === 'HEAD' ? undefined : body.value);
  }

  private async route(segments: string[], req: Request, res: Response, frame: PageFrame): Promise<Answer> {
    const actor = frame.actor;
    const label = (template: string) => labelRoute(req, template);
    if (!segments.length) {
      label('/');
      return this.home(req, frame);
    }
    if (segments.length === 2 && segments[0] === 'users' && segments[1] === 'sign_in') {
      label('/users/sign_in');
      return { page: signInPage(frame, queryString(req.query.return_to), undefined) };
    }
    if (segments[0] === 'groups') {
      if (segments.length < 2) return undefined;
      label('/groups/*group');
      return this.group(segments.slice(1), frame);
    }
    const dash = segments.indexOf('-');
    if (dash >= 2) {
      const [action, ...rest] = segments.slice(dash + 1);
      if (!Object.hasOwn(PROJECT_ACTIONS, action)) return undefined;
      label(actionRoute(action, rest));
      const project = await this.projects.getVisible(segments.slice(0, dash).join('/'), actor);
      return this.projectAction(project, action, rest, req, res, frame);
    }
    if (dash >= 0) return undefined;
    if (segments.length === 1) {
      label('/:username');
      return this.user(segments[0], frame);
    }
    const fullPath = segments.join('/');
    const project = await this.projects.getVisible(fullPath, actor).catch(orUndefined);
    if (project) {
      label('/*project');
      return this.projectPage(project, frame);
    }
    const group = await this.namespaces.visibleGroup(fullPath, actor).catch(orUndefined);
    if (group) {
      label('/*group');
      return { redirect: `/groups/${pathUrl(group.fullPath)}` };
    }
    // `<project>/commit/<sha>` and the other forms from before `/-/`.
    for (let i = segments.length - 1; i >= 2; i--) {
      if (!OLD_ACTIONS.has(segments[i])) continue;
      const old = await this.projects.getVisible(segments.slice(0, i).join('/'), actor).catch(orUndefined);
      if (old) {
        label(`/*project/${segments[i]}/*path`);
        const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
        return { redirect: `${projectUrl(old)}/-/${segments.slice(i).map(encodeURIComponent).join('/')}${search}` };
      }
    }
    return undefined;
  }

  private async home(req: Request, frame: PageFrame): Promise<Answer> {
    const search = queryString(req.query.search).slice(0, 100);
    const n = pageNumber(req.query.page);
    const { rows } = await this.projects.list(
      frame.actor,
      { search: search || undefined, orderBy: 'last_activity_at', sort: 'desc' },
      { page: n, perPage: PER_PAGE + 1, offset: (n - 1) * PER_PAGE },
      { count: false, lean: true },
    );
    return {
      page: page(
        'Projects',
        frame,
        html`<h1>Projects</h1>
          <p class="muted">
            ${frame.actor ? 'Projects you may see' : 'Public projects'}, most recently active first. The API is at
            <code>${this.config.externalUrl}/api/v4</code>; its reference is at <a href="/api/docs">/api/docs</a>.
          </p>
          <form class="search" method="get" action="/" role="search">
            <label class="visually-hidden" for="search">Search projects</label>
            <input id="search" name="search" type="search" value="${search}" placeholder="Search projects" />
            <button class="btn" type="submit">Search</button>
          </form>
          ${projectList(rows.slice(0, PER_PAGE), search ? 'No project matches.' : 'No projects yet.')}
          ${pager('/', search ? { search } : {}, n, rows.length > PER_PAGE)}`,
      ),
    };
  }

  private async group(segments: string[], frame: PageFrame): Promise<Answer> {
    if (segments.includes('-')) return undefined;
    const group = await this.namespaces.visibleGroup(segments.join('/'), frame.actor);
    const [subgroups, projects] = await Promise.all([
      this.groups.list(
        frame.actor,
        { parentId: group.id, allAvailable: true, orderBy: 'name', sort: 'asc' },
        { page: 1, perPage: 100, offset: 0 },
      ),
      this.projects.list(
        frame.actor,
        { namespaceId: group.id, orderBy: 'last_activity_at', sort: 'desc' },
        { page: 1, perPage: 100, offset: 0 },
        { lean: true },
      ),
    ]);
    const parent = group.fullPath.includes('/') ? group.fullPath.slice(0, group.fullPath.lastIndexOf('/')) : undefined;
    return {
      page: page(
        group.name,
        frame,
        html`${parent ? html`<p class="crumbs"><a href="/groups/${pathUrl(parent)}">${parent}</a> /</p>` : ''}
          <h1>${group.name} <span class="badge">${group.visibility}</span></h1>
          ${group.description ? html`<p>${group.description}</p>` : ''}
          <h2>Subgroups</h2>
          ${
            subgroups.rows.length
              ? html`<ul class="list">
                  ${subgroups.rows.map(
                    (g) =>
                      html`<li>
                        <a href="/groups/${pathUrl(g.fullPath)}">${g.name}</a>
                        <span class="badge">${g.visibility}</span>
                        ${g.description ? html`<span class="meta">${g.description}</span>` : ''}
                      </li>`,
                  )}
                </ul>`
              : html`<p class="muted">No subgroups.</p>`
          }
          ${subgroups.total > subgroups.rows.length ? html`<p class="muted">${subgroups.total - subgroups.rows.length} more in the API.</p>` : ''}
          <h2>Projects</h2>
          ${projectList(projects.rows, 'No projects.')}
          ${projects.total > projects.rows.length ? html`<p class="muted">${projects.total - projects.rows.length} more in the API.</p>` : ''}`,
      ),
    };
  }

  private async user(username: string, frame: PageFrame): Promise<Answer> {
    // An all-digit segment would be read as a user id by the look-up; GitLab's web paths name users only by username.
    if (/^\d+$/.test(username)) return undefined;
    const user = await this.users.findByIdOrUsername(username);
    if (!user) {
      const group = await this.namespaces.visibleGroup(username, frame.actor).catch(orUndefined);
      return group ? { redirect: `/groups/${pathUrl(group.fullPath)}` } : undefined;
    }
    const { rows, total } = await this.projects.list(
      frame.actor,
      { ownerId: user.id, orderBy: 'last_activity_at', sort: 'desc' },
      { page: 1, perPage: 100, offset: 0 },
      { lean: true },
    );
    return {
      page: page(
        user.username,
        frame,
        html`<h1>${user.name} <span class="muted">@${user.username}</span></h1>
          ${user.bio ? html`<p>${user.bio}</p>` : ''}
          <h2>Projects</h2>
          ${projectList(rows, 'No projects.')}
          ${total > rows.length ? html`<p class="muted">${total - rows.length} more in the API.</p>` : ''}`,
      ),
    };
  }

  private async defaultRef(project: ProjectRow, repo: RepoRef): Promise<string | undefined> {
    return project.default_branch ?? (await this.git.headBranch(repo));
  }

  private async projectPage(project: ProjectRow, frame: PageFrame): Promise<Answer> {
    const repo = projectRepo(project.id);
    const mayRead = ProjectAccessPolicy.mayDownloadCode(project, frame.actor);
    const ref = mayRead ? await this.defaultRef(project, repo) : undefined;
    const commit = ref ? await this.git.resolveCommit(repo, ref) : undefined;
    const entries = commit ? ((await this.git.tree(repo, commit.id, '', false)) ?? []) : [];
    const readme = entries.find((e) => e.type === 'blob' && README.test(e.name));
    const readmeFile = readme && commit ? await this.git.readFile(repo, commit.id, readme.path) : undefined;
    const fullPath = `${project.ns_full_path}/${project.path}`;
    const httpUrl = `${this.config.externalUrl}/${fullPath}.git`;
    const sshUrl = `${this.config.sshCloneBase}${fullPath}.git`;
    const base = projectUrl(project);
    return {
      page: page(
        project.name,
        frame,
        html`${projectHeader(project, ref, 'files')} ${project.description ? html`<p>${project.description}</p>` : ''}
          <div class="clone">
            <label
              ><span>HTTP</span><input id="clone-http" readonly value="${httpUrl}" /><button
                class="copy"
                type="button"
                data-copy="clone-http"
                hidden
              >
                Copy
              </button></label
            >
            <label
              ><span>SSH</span><input id="clone-ssh" readonly value="${sshUrl}" /><button
                class="copy"
                type="button"
                data-copy="clone-ssh"
                hidden
              >
                Copy
              </button></label
            >
          </div>
          ${
            !mayRead
              ? html`<p class="muted">You may see this project but not read its repository.</p>`
              : !commit
                ? html`<p class="muted">The repository is empty.</p>`
                : html`<p class="muted">
                      Default branch <a href="${base}/-/tree/${pathUrl(ref!)}">${ref}</a> · last commit
                      <a href="${base}/-/commit/${commit.id}">${commit.title}</a>
                    </p>
                    ${treeTable(project, ref!, '', entries)}
                    ${readmeFile ? this.readme(project, ref!, readmeFile.path, readmeFile.content) : ''}`
          }`,
      ),
    };
  }

  private readme(project: ProjectRow, ref: string, path: string, content: Buffer): SafeHtml {
    const text = content.subarray(0, MAX_SHOWN_BYTES).toString('utf8');
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    return html`<h2>${path}</h2>
      <div class="readme">
        ${
          MARKDOWN.test(path)
            ? renderMarkdown(text, { project: projectUrl(project), ref, dir })
            : html`<pre>${text}</pre>`
        }
      </div>`;
  }

  /** The ref is the shortest leading run of segments that names a commit (a branch name may hold slashes); the rest is the path. */
  private async refAndPath(
    repo: RepoRef,
    segments: string[],
  ): Promise<{ ref: string; commit: CommitInfo; path: string } | undefined> {
    for (let i = 1; i <= Math.min(segments.length, 20); i++) {
      const ref = segments.slice(0, i).join('/');
      const commit = await this.git.resolveCommit(repo, ref);
      if (commit) return { ref, commit, path: segments.slice(i).join('/') };
    }
    return undefined;
  }

  private async projectAction(
    project: ProjectRow,
    action: string,
    rest: string[],
    req: Request,
    res: Response,
    frame: PageFrame,
  ): Promise<Answer> {
    ProjectAccessPolicy.requireDownloadCode(project, frame.actor);
    const repo = projectRepo(project.id);
    const n = pageNumber(req.query.page);
    switch (action) {
      case 'tree': {
        const at = rest.length ? await this.refAndPath(repo, rest) : undefined;
        if (!at) return undefined;
        const entries = await this.git.tree(repo, at.commit.id, at.path, false);
        if (!entries) {
          const file = at.path ? await this.git.fileEntry(repo, at.commit.id, at.path) : undefined;
          return file
            ? { redirect: `${projectUrl(project)}/-/blob/${pathUrl(at.ref)}/${pathUrl(at.path)}` }
            : undefined;
        }
        const etag = this.immutableEtag(project, at.ref, at.commit.id, frame);
        if (etag && ifNoneMatch(req, etag)) return { notModified: etag };
        return {
          etag,
          page: page(
            at.path || project.name,
            frame,
            html`${projectHeader(project, at.ref, 'files')}${pathCrumbs(project, at.ref, at.path)}${treeTable(project, at.ref, at.path, entries)}`,
          ),
        };
      }
      case 'blob':
        return this.blob(project, repo, rest, req, frame);
      case 'raw': {
        const at = rest.length ? await this.refAndPath(repo, rest) : undefined;
        const file = at?.path ? await this.git.fileEntry(repo, at.commit.id, at.path) : undefined;
        const blob = file ? await this.git.rawBlob(repo, file.blobId) : undefined;
        if (!file || !blob) return undefined;
        res.setHeader('Cache-Control', frame.actor ? 'private, no-store' : 'no-cache');
        // Raster images by their type, for the blob page's <img>; everything else as the API sends it.
        sendRawBlob(res, blob, rasterType(file.name));
        return { sent: true };
      }
      case 'commits': {
        const at = rest.length ? await this.refAndPath(repo, rest) : undefined;
        if (!at) return undefined;
        const log = await this.git.commitLog(repo, {
          ref: at.commit.id,
          all: false,
          path: at.path || undefined,
          offset: (n - 1) * PER_PAGE,
          limit: PER_PAGE,
          withStats: false,
        });
        return {
          page: page(
            `Commits · ${project.name}`,
            frame,
            html`${projectHeader(project, at.ref, 'commits')}
              <h2>Commits on ${at.ref}${at.path ? html` in ${at.path}` : ''}</h2>
              <ul class="list">
                ${log.commits.map((c) => commitItem(project, c))}
              </ul>
              ${pager(req.path, {}, n, log.total > n * PER_PAGE)}`,
          ),
        };
      }
      case 'commit': {
        if (rest.length !== 1) return undefined;
        const commit = await this.git.resolveCommit(repo, rest[0]);
        if (!commit) return undefined;
        const etag = this.immutableEtag(project, rest[0], commit.id, frame);
        if (etag && ifNoneMatch(req, etag)) return { notModified: etag };
        const { diffs, overflow } = await this.git.commitDiff(repo, commit.id, {
          maxFiles: this.config.compareMaxFiles,
          maxLines: this.config.compareMaxLines,
          maxBytes: this.config.compareMaxBytes,
        });
        return {
          etag,
          page: page(
            `${commit.title} · ${project.name}`,
            frame,
            html`${projectHeader(project, undefined, undefined)}${commitHead(project, commit)}
              <p><a href="${projectUrl(project)}/-/tree/${commit.id}">Browse files at this commit</a></p>
              ${diffs.map(fileDiff)}
              ${overflow ? html`<p class="muted">The diff is too large to show in full.</p>` : ''}`,
          ),
        };
      }
      case 'branches': {
        if (rest.length) return undefined;
        const main = await this.defaultRef(project, repo);
        const all = await this.git.branches(repo, main);
        return this.listPage(project, frame, main, 'branches', {
          items: all.slice((n - 1) * LIST_PAGE, n * LIST_PAGE).map((b) => branchItem(project, b, main)),
          pager: pager(req.path, {}, n, all.length > n * LIST_PAGE),
        });
      }
      case 'tags': {
        if (rest.length) return undefined;
        const all = await this.git.tags(repo);
        return this.listPage(project, frame, await this.defaultRef(project, repo), 'tags', {
          items: all.slice((n - 1) * LIST_PAGE, n * LIST_PAGE).map((t) => tagItem(project, t)),
          pager: pager(req.path, {}, n, all.length > n * LIST_PAGE),
        });
      }
      case 'archive':
        return this.archive(project, repo, rest, res, frame);
      case 'releases': {
        if (rest.length > 2 && rest[1] === 'downloads') return this.download(project, rest[0], rest.slice(2));
        if (rest.length > 1) return undefined;
        const ref = await this.defaultRef(project, repo);
        // One release: its own page, with no pager.
        if (rest.length) {
          const one = await this.releases.find(project.id, rest[0]);
          if (!one) return undefined;
          return this.listPage(project, frame, ref, 'releases', { items: [releaseItem(project, one)], pager: '' });
        }
        const { rows, total } = await this.releases.page(
          project.id,
          { orderBy: 'released_at', sort: 'desc' },
          { page: n, perPage: PER_PAGE, offset: (n - 1) * PER_PAGE },
        );
        return this.listPage(project, frame, ref, 'releases', {
          items: rows.map((r) => releaseItem(project, r)),
          pager: pager(req.path, {}, n, total > n * PER_PAGE),
        });
      }
      default:
        return undefined;
    }
  }

  /**
   * The branch, tag and release lists: the project's header with its tab, the list (or that there
   * is none) and the pager; only their items and pager differ.
   */
  private listPage(
    project: ProjectRow,
    frame: PageFrame,
    ref: string | undefined,
    tab: 'branches' | 'tags' | 'releases',
    list: { items: SafeHtml[]; pager: SafeHtml | '' },
  ): Answer {
    const title = LIST_TITLES[tab];
    return {
      page: page(
        `${title} · ${project.name}`,
        frame,
        html`${projectHeader(project, ref, tab)}
          <h2>${title}</h2>
          ${
            list.items.length
              ? html`<ul class="list">
                  ${list.items}
                </ul>`
              : html`<p class="muted">No ${tab}.</p>`
          }
          ${list.pager}`,
      ),
    };
  }

  /**
   * GitLab's `/-/archive/<ref>/<file name>.<format>` (the release sources the API lists): the API's
   * archive of the ref's commit. The ref is everything before the last segment (GitLab's
   * `extract_ref_and_filename`); the format is the longest archive format the file name ends with.
   * A file name that is the release's short name `<project>-<ref>` makes that the top directory;
   * any other keeps the commit id in it, unless the ref is the commit id (GitLab's `append_sha`).
   */
  private async archive(
    project: ProjectRow,
    repo: RepoRef,
    rest: string[],
    res: Response,
    frame: PageFrame,
  ): Promise<Answer> {
    if (rest.length < 2) return undefined;
    const ref = rest.slice(0, -1).join('/');
    const filename = rest[rest.length - 1];
    let stem: string | undefined;
    let ext: ReturnType<typeof archiveExtension>;
    for (let i = filename.indexOf('.'); i > 0 && !ext; i = filename.indexOf('.', i + 1)) {
      ext = archiveExtension(filename.slice(i + 1));
      stem = filename.slice(0, i);
    }
    if (!ext || !stem) return undefined;
    const commit = await this.git.resolveCommit(repo, ref);
    if (!commit) return undefined;
    const short = `${project.path}-${ref.replace(/\//g, '-')}`;
    const prefix = stem === short || ref === commit.id ? short : `${short}-${commit.id}`;
    res.setHeader('Cache-Control', frame.actor ? 'private, no-store' : 'no-cache');
    await sendArchive(this.git, res, repo, commit.id, ext, prefix);
    return { sent: true };
  }

  /** GitLab's release asset path (`direct_asset_url`): a 302 to the URL of the release's link with that file path. */
  private async download(project: ProjectRow, tag: string, filepath: string[]): Promise<Answer> {
    const links = (await this.releases.linksOf(project.id, [tag])).get(tag) ?? [];
    const link = links.find((l) => l.filepath === `/${filepath.join('/')}`);
    return link ? { redirect: link.url, status: 302 } : undefined;
  }

  private async blob(
    project: ProjectRow,
    repo: RepoRef,
    rest: string[],
    req: Request,
    frame: PageFrame,
  ): Promise<Answer> {
    const at = rest.length ? await this.refAndPath(repo, rest) : undefined;
    if (!at?.path) return undefined;
    const file = await this.git.fileEntry(repo, at.commit.id, at.path);
    if (!file) {
      const entries = await this.git.tree(repo, at.commit.id, at.path, false);
      return entries ? { redirect: `${projectUrl(project)}/-/tree/${pathUrl(at.ref)}/${pathUrl(at.path)}` } : undefined;
    }
    const etag = this.immutableEtag(project, at.ref, at.commit.id, frame);
    if (etag && ifNoneMatch(req, etag)) return { notModified: etag };
    const rawUrl = `${projectUrl(project)}/-/raw/${pathUrl(at.ref)}/${pathUrl(at.path)}`;
    // Small blobs come whole, large ones as a stream: a large one is only offered for download.
    const blob = await this.git.rawBlob(repo, file.blobId);
    if (!blob) return undefined;
    if ('stream' in blob) blob.cancel();
    let body: SafeHtml;
    if (rasterType(file.name)) body = html`<img src="${rawUrl}" alt="${file.name}" />`;
    else if (blob.binary || !('content' in blob) || blob.size > MAX_SHOWN_BYTES)
      body = html`<p class="muted">
        ${blob.binary ? 'A binary file' : 'A large file'} (${blob.size} bytes): <a href="${rawUrl}">download it</a>.
      </p>`;
    else if (MARKDOWN.test(file.name))
      body = html`<div class="readme">
        ${renderMarkdown(blob.content.toString('utf8'), {
          project: projectUrl(project),
          ref: at.ref,
          dir: at.path.includes('/') ? at.path.slice(0, at.path.lastIndexOf('/')) : '',
        })}
      </div>`;
    else body = html`<pre><code>${highlight(blob.content.toString('utf8'), file.name)}</code></pre>`;
    return {
      etag,
      page: page(
        `${file.name} · ${project.name}`,
        frame,
        html`${projectHeader(project, at.ref, 'files')}${pathCrumbs(project, at.ref, at.path)}
          <div class="blob">
            <div class="bar">
              <span>${file.name}</span><span class="muted">${blob.size} bytes</span>
              <a href="${rawUrl}">Raw</a>
              <a href="${projectUrl(project)}/-/commits/${pathUrl(at.ref)}/${pathUrl(at.path)}">History</a>
            </div>
            ${body}
          </div>`,
      ),
    };
  }
}

/** The route template of a project's `/-/<action>` path, for the metrics. */
function actionRoute(action: string, rest: string[]): string {
  if (action !== 'releases' || !rest.length) return PROJECT_ACTIONS[action];
  return rest.length > 2 && rest[1] === 'downloads'
    ? '/*project/-/releases/:tag/downloads/*filepath'
    : '/*project/-/releases/:tag';
}

const orUndefined = (err: unknown): undefined => {
  if (err instanceof NotFound) return undefined;
  throw err;
};
