import { ApiError, NotFound } from '@app/platform';

/*
 * A release's asset links (GitLab 11.7 `Releases::Link`), on the release's stream with the release
 * they belong to (release-stream.ts). The release's state keeps what the model's uniqueness checks
 * read (name, url and file path within one release); the rest is the read model's.
 */

/** GitLab's `link_type` enum (`Releases::Link`), in the order the API's `values:` lists it. */
export const LINK_TYPES = ['other', 'runbook', 'image', 'package'] as const;
export type LinkType = (typeof LINK_TYPES)[number];

/** A link as the model stores it: `direct_asset_path` is stored as `filepath`, with its leading slash. */
export interface ReleaseLinkValues {
  name: string;
  url: string;
  filepath: string | null;
  linkType: LinkType;
}

/** What the decisions read of one link: its values, to check others against and to change. */
export interface ReleaseLinkState extends ReleaseLinkValues {
  tagName: string;
  linkId: number;
}

export type ReleaseLinkEvent =
  | {
      type: 'ProjectReleaseLinkAdded';
      data: ReleaseLinkValues & { projectId: number; tagName: string; linkId: number; at: string };
    }
  | {
      type: 'ProjectReleaseLinkChanged';
      data: ReleaseLinkValues & { projectId: number; tagName: string; linkId: number; at: string };
    }
  | { type: 'ProjectReleaseLinkRemoved'; data: { projectId: number; tagName: string; linkId: number; at: string } };

/** What these decisions read of the release's stream (release-stream.ts's `Release` is one). */
type ReleaseLinks = { released: boolean; links: readonly ReleaseLinkState[] };

/** `Releases::Link::FILEPATH_REGEX`: a leading slash, then path segments, ending in a letter or digit. */
const FILEPATH = /^\/(?:[-.\w]+\/?)*[\da-zA-Z]+$/;
const FILEPATH_MAX = 128;
/** `validates :url, addressable_url: { schemes: %w(http https ftp) }` (doc: "http, https, and ftp assets"). */
const SCHEMES = ['http:', 'https:', 'ftp:'];

/**
 * The model's validations of one link, as `errors.full_messages` words them, in the model's order
 * (url, name, filepath). `others` are the release's other links, for the uniqueness checks
 * (`validates :url, :name, :filepath, uniqueness: { scope: :release }`).
 */
export function linkErrors(link: ReleaseLinkValues, others: readonly ReleaseLinkState[]): string[] {
  const errors: string[] = [];
  if (!link.url.trim()) errors.push("Url can't be blank");
  else if (!validUrl(link.url)) errors.push('Url is blocked: Only allowed schemes are http, https, ftp');
  else if (others.some((o) => o.url === link.url)) errors.push('Url has already been taken');
  if (!link.name.trim()) errors.push("Name can't be blank");
  else if (others.some((o) => o.name === link.name)) errors.push('Name has already been taken');
  if (link.filepath) {
    if (link.filepath.length > FILEPATH_MAX)
      errors.push(`Filepath is too long (maximum is ${FILEPATH_MAX} characters)`);
    if (!FILEPATH.test(link.filepath)) errors.push('Filepath is in an invalid format');
    if (others.some((o) => o.filepath === link.filepath)) errors.push('Filepath has already been taken');
  }
  return errors;
}

function validUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return SCHEMES.includes(u.protocol) && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The release of a link route (`find_by_tag!`), else `404 Not found`: the release API's links hang
 * below a release, so a missing one is GitLab's ActiveRecord miss.
 */
function releaseOf(s: ReleaseLinks): ReleaseLinks {
  if (!s.released) throw new NotFound();
  return s;
}

/**
 * The links given with a new release (`assets[links]` of `POST /projects/:id/releases`), checked as
 * the nested attributes are (each link, and each against the ones before it). GitLab's service answers
 * the failed `save!` with 400 and the exception's message.
 */
export function addLinksOfNewRelease(
  projectId: number,
  tagName: string,
  links: readonly ReleaseLinkValues[],
  linkIds: readonly number[],
  now: Date,
): Extract<ReleaseLinkEvent, { type: 'ProjectReleaseLinkAdded' }>[] {
  const accepted: ReleaseLinkState[] = [];
  const errors: string[] = [];
  links.forEach((link, i) => {
    errors.push(...linkErrors(link, accepted).map((m) => `Links ${m.charAt(0).toLowerCase()}${m.slice(1)}`));
    accepted.push({ tagName, linkId: linkIds[i], ...link });
  });
  if (errors.length) throw new ApiError(400, `Validation failed: ${[...new Set(errors)].join(', ')}`);
  const at = now.toISOString();
  return links.map((link, i) => ({
    type: 'ProjectReleaseLinkAdded',
    data: { projectId, tagName, linkId: linkIds[i], ...link, at },
  }));
}

/**
 * `POST .../releases/:tag_name/assets/links` (`Releases::Links::CreateService`): 404 without the
 * release; the model's errors are 400 `{"message": [full messages]}`.
 */
export function addReleaseLink(
  projectId: number,
  s: ReleaseLinks,
  tagName: string,
  linkId: number,
  link: ReleaseLinkValues,
  now: Date,
): Extract<ReleaseLinkEvent, { type: 'ProjectReleaseLinkAdded' }>[] {
  const p = releaseOf(s);
  const errors = linkErrors(link, p.links);
  if (errors.length) throw new ApiError(400, errors);
  return [
    {
      type: 'ProjectReleaseLinkAdded',
      data: { projectId, tagName, linkId, ...link, at: now.toISOString() },
    },
  ];
}

/** One link of the release, else `404 Not found` (`release.links.find(params[:link_id])`). */
function linkOf(p: ReleaseLinks, linkId: number): ReleaseLinkState {
  const link = p.links.find((l) => l.linkId === linkId);
  if (!link) throw new NotFound();
  return link;
}

/**
 * `PUT .../assets/links/:link_id` (`Releases::Links::UpdateService`): the given values over the
 * stored ones, checked as a create is, against the release's other links. GitLab declares
 * `link_type` with a default, so its PUT without one sets `other`; Lode keeps the stored type, which
 * is what a client that sends only what changed (Terraform) means.
 */
export function changeReleaseLink(
  projectId: number,
  s: ReleaseLinks,
  tagName: string,
  linkId: number,
  changes: Partial<ReleaseLinkValues>,
  now: Date,
): Extract<ReleaseLinkEvent, { type: 'ProjectReleaseLinkChanged' }>[] {
  const p = releaseOf(s);
  const { name, url, filepath, linkType } = linkOf(p, linkId);
  const next: ReleaseLinkValues = { name, url, filepath, linkType, ...changes };
  const errors = linkErrors(
    next,
    p.links.filter((l) => l.linkId !== linkId),
  );
  if (errors.length) throw new ApiError(400, errors);
  return [
    {
      type: 'ProjectReleaseLinkChanged',
      data: { projectId, tagName, linkId, ...next, at: now.toISOString() },
    },
  ];
}

/** `DELETE .../assets/links/:link_id` (`Releases::Links::DestroyService`): 404 without the release or link. */
export function removeReleaseLink(
  projectId: number,
  s: ReleaseLinks,
  tagName: string,
  linkId: number,
  now: Date,
): Extract<ReleaseLinkEvent, { type: 'ProjectReleaseLinkRemoved' }>[] {
  const p = releaseOf(s);
  linkOf(p, linkId);
  return [{ type: 'ProjectReleaseLinkRemoved', data: { projectId, tagName, linkId, at: now.toISOString() } }];
}

/** Folds a link event, or a release's removal (which takes its links), into the links the decisions read. */
export function evolveReleaseLinks(
  links: readonly ReleaseLinkState[],
  e: ReleaseLinkEvent | { type: 'ProjectReleaseRemoved'; data: { tagName: string } },
): ReleaseLinkState[] {
  switch (e.type) {
    case 'ProjectReleaseRemoved':
      return links.filter((l) => l.tagName !== e.data.tagName);
    case 'ProjectReleaseLinkRemoved':
      return links.filter((l) => !(l.tagName === e.data.tagName && l.linkId === e.data.linkId));
    case 'ProjectReleaseLinkAdded':
    case 'ProjectReleaseLinkChanged': {
      const { tagName, linkId, name, url, filepath, linkType } = e.data;
      const others = links.filter((l) => !(l.tagName === tagName && l.linkId === linkId));
      return [...others, { tagName, linkId, name, url, filepath, linkType }];
    }
  }
}
