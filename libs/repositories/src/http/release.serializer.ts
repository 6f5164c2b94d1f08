import type { CommitInfo } from '@app/git';
import type { ProjectRow, ReleaseLinkRow, ReleaseRow } from '@app/projects';
import type { UserBasicJson } from '@app/users';
import { serializeCommit } from './commit.serializer';

/** The archive formats a release lists as its sources, in GitLab's order (`Releases::Source::FORMATS`). */
const SOURCE_FORMATS = ['zip', 'tar.gz', 'tar.bz2', 'tar'] as const;

/** What the Release entity reads besides the release: the project's URLs and what the caller may see. */
export interface ReleaseContext {
  project: Pick<ProjectRow, 'id' | 'path' | 'ns_full_path'>;
  externalUrl: string;
  /** GitLab's `read_code` (`download_code`): without it the commit, the sources and the evidences are left out. */
  readCode: boolean;
  /** GitLab's `update_release`: only then is `_links.edit_url` shown. */
  mayUpdate: boolean;
  now: Date;
}

const fullPath = (p: ReleaseContext['project']) => `${p.ns_full_path}/${p.path}`;
const webUrl = (ctx: Pick<ReleaseContext, 'project' | 'externalUrl'>) => `${ctx.externalUrl}/${fullPath(ctx.project)}`;

/**
 * GitLab's `Releases::Link` entity: `direct_asset_url` is the release's download path for a link with
 * a `filepath` (`direct_asset_path`), else the link's own URL; `external` (dropped in 16.0, still read
 * by go-gitlab and Terraform) whether the URL points outside the project.
 */
export function serializeReleaseLink(l: ReleaseLinkRow, ctx: Pick<ReleaseContext, 'project' | 'externalUrl'>) {
  const web = webUrl(ctx);
  return {
    id: l.id,
    name: l.name,
    url: l.url,
    direct_asset_url: l.filepath ? `${web}/-/releases/${encodeURIComponent(l.tagName)}/downloads${l.filepath}` : l.url,
    external: !l.url.startsWith(web),
    link_type: l.linkType,
  };
}

/**
 * GitLab's Release entity (11.7, with the later `released_at`, `upcoming_release`, `commit_path`,
 * `tag_path`, `evidences` and `_links`). `description_html` is left out, as GitLab does unless
 * `include_html_description` is asked (Lode renders no Markdown); `milestones` is absent, as for a
 * release without any. `commit` is absent when the tag is gone from the repository.
 */
export function serializeProjectRelease(
  r: ReleaseRow,
  links: readonly ReleaseLinkRow[],
  commit: CommitInfo | undefined,
  author: UserBasicJson | undefined,
  ctx: ReleaseContext,
) {
  const web = webUrl(ctx);
  const tag = encodeURIComponent(r.tagName);
  const archiveName = `${ctx.project.path}-${r.tagName.replace(/\//g, '-')}`;
  const shownCommit = ctx.readCode && commit ? commit : undefined;
  return {
    name: r.name,
    tag_name: r.tagName,
    description: r.description,
    created_at: r.createdAt.toISOString(),
    released_at: r.releasedAt.toISOString(),
    upcoming_release: r.releasedAt.getTime() > ctx.now.getTime(),
    ...(author ? { author } : {}),
    ...(shownCommit
      ? { commit: { ...serializeCommit(shownCommit), web_url: `${web}/-/commit/${shownCommit.id}` } }
      : {}),
    ...(shownCommit ? { commit_path: `/${fullPath(ctx.project)}/-/commit/${shownCommit.id}` } : {}),
    tag_path: `/${fullPath(ctx.project)}/-/tags/${tag}`,
    assets: {
      count: links.length + (ctx.readCode ? SOURCE_FORMATS.length : 0),
      ...(ctx.readCode
        ? {
            sources: SOURCE_FORMATS.map((format) => ({
              format,
              url: `${web}/-/archive/${tag}/${archiveName}.${format}`,
            })),
          }
        : {}),
      links: links.map((l) => serializeReleaseLink(l, ctx)),
    },
    ...(ctx.readCode ? { evidences: [] } : {}),
    _links: {
      ...(ctx.mayUpdate ? { edit_url: `${web}/-/releases/${tag}/edit` } : {}),
      self: `${web}/-/releases/${tag}`,
    },
  };
}

export type ProjectReleaseJson = ReturnType<typeof serializeProjectRelease>;
