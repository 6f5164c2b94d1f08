import { Conflict, NotFound } from '@app/platform';

/*
 * Release notes of tags (GitLab 10.x's `Release`: a project, a tag name, a description), each release
 * on a stream of its own (`release-<project>-<tag hash>`, release-stream.ts). The tag itself lives in
 * the repository: whether it exists is asked of git before the decision and handed to it; the
 * project's existence and access are checked before, outside the stream.
 */

/** GitLab's Release entity (`Entities::Release`, 11.7 renamed `TagRelease`): the tag's name and the notes. */
export interface TagRelease {
  tagName: string;
  description: string;
}

/**
 * 404 with a sentence of GitLab's own (`render_api_error!(message, 404)`), not the `404 <X> Not Found`
 * of `not_found!`: `{"message":"Tag does not exist"}`.
 */
export class ReleaseNotFound extends NotFound {
  constructor(text: 'Tag does not exist' | 'Release does not exist') {
    super();
    this.message = text;
  }
}

/** The events about a release's notes: members of the release stream's union (release-stream.ts). */
export type ReleaseEvent =
  | { type: 'ProjectReleaseCreated'; data: ReleaseCreatedData }
  | { type: 'ProjectReleaseUpdated'; data: TagRelease & { projectId: number; at: string } }
  | { type: 'ProjectReleaseChanged'; data: { projectId: number; tagName: string; changes: ReleaseChanges; at: string } }
  | { type: 'ProjectReleaseRemoved'; data: { projectId: number; tagName: string; at: string } };

/**
 * One release, whichever API made it: 10.x's tag release notes give the tag and the description;
 * the Releases API (11.7) adds a name, the release date and the author. Events of 10.x's route lack
 * those: a release without a name is shown under its tag's, and one without a date was released
 * when it was created, as GitLab's migration to 11.7 filled them.
 */
export interface ReleaseCreatedData {
  projectId: number;
  tagName: string;
  /** Null when the Releases API was given none (10.x's notes always have one). */
  description: string | null;
  at: string;
  name?: string | null;
  releasedAt?: string;
  authorId?: number;
}

/** What `PUT /projects/:id/releases/:tag_name` changes; absent keys stay as they are. */
export interface ReleaseChanges {
  name?: string | null;
  description?: string | null;
  releasedAt?: string;
}

/** A release of the Releases API (`POST /projects/:id/releases`), its links apart. */
export interface NewRelease {
  tagName: string;
  name: string | null;
  description: string | null;
  releasedAt: string | null;
  authorId: number;
}

/** What these decisions read of the release's stream (release-stream.ts's `Release` is one). */
type ReleaseView = { released: boolean };

/*
 * GitLab 10.x's Release validates a present description (`validates :description, presence: true`),
 * but CreateReleaseService and UpdateReleaseService ignore what `save` / `update_attributes` answer and
 * report success: a blank description is answered 201 (or 200) with the blank notes and stored nowhere.
 * Lode does the same: no event, the same answer.
 */
const blank = (description: string) => !description.trim();

/**
 * `POST /projects/:id/repository/tags/:tag_name/release` (CreateReleaseService): the tag must exist
 * (`Tag does not exist`, 404), and have no release yet (`Release already exists`, 409).
 */
export function createRelease(
  projectId: number,
  s: ReleaseView,
  release: TagRelease,
  tagExists: boolean,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseCreated' }>[] {
  if (!tagExists) throw new ReleaseNotFound('Tag does not exist');
  if (s.released) throw new Conflict('Release already exists');
  if (blank(release.description)) return [];
  return [{ type: 'ProjectReleaseCreated', data: { projectId, ...release, at: now.toISOString() } }];
}

/**
 * `PUT /projects/:id/repository/tags/:tag_name/release` (UpdateReleaseService): the tag must exist
 * (`Tag does not exist`) and have a release (`Release does not exist`), both 404. The same notes
 * again change nothing.
 */
export function updateRelease(
  projectId: number,
  s: ReleaseView,
  release: TagRelease,
  tagExists: boolean,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseUpdated' }>[] {
  if (!tagExists) throw new ReleaseNotFound('Tag does not exist');
  if (!s.released) throw new ReleaseNotFound('Release does not exist');
  if (blank(release.description)) return [];
  return [{ type: 'ProjectReleaseUpdated', data: { projectId, ...release, at: now.toISOString() } }];
}

/**
 * `POST /projects/:id/releases` (11.7 `Releases::CreateService`): 409 `Release already exists` when
 * the tag has one, whichever API made it; the tag was made first when it was missing and a `ref`
 * was given. `released_at` defaults to the creation time (`before_create :set_released_at`).
 */
export function publishRelease(
  projectId: number,
  s: ReleaseView,
  release: NewRelease,
  tagExists: boolean,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseCreated' }>[] {
  if (s.released) throw new Conflict('Release already exists');
  if (!tagExists) throw new ReleaseNotFound('Tag does not exist');
  const at = now.toISOString();
  const { releasedAt, ...rest } = release;
  return [{ type: 'ProjectReleaseCreated', data: { projectId, ...rest, releasedAt: releasedAt ?? at, at } }];
}

/**
 * `PUT /projects/:id/releases/:tag_name` (`Releases::UpdateService`): 404 `Tag does not exist`, then
 * 404 `Release does not exist`. Values equal to the stored ones are still an update in GitLab (the
 * model saves, `updated_at` moves), so the event is appended whenever something was given.
 */
export function changeRelease(
  projectId: number,
  s: ReleaseView,
  tagName: string,
  changes: ReleaseChanges,
  tagExists: boolean,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseChanged' }>[] {
  if (!tagExists) throw new ReleaseNotFound('Tag does not exist');
  if (!s.released) throw new ReleaseNotFound('Release does not exist');
  return [{ type: 'ProjectReleaseChanged', data: { projectId, tagName, changes, at: now.toISOString() } }];
}

/**
 * `DELETE /projects/:id/releases/:tag_name` (`Releases::DestroyService`): the release and its links
 * go, the tag stays. 404 `Tag does not exist`, then `Release does not exist`.
 */
export function deleteRelease(
  projectId: number,
  s: ReleaseView,
  tagName: string,
  tagExists: boolean,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseRemoved' }>[] {
  if (!tagExists) throw new ReleaseNotFound('Tag does not exist');
  if (!s.released) throw new ReleaseNotFound('Release does not exist');
  return [{ type: 'ProjectReleaseRemoved', data: { projectId, tagName, at: now.toISOString() } }];
}

/**
 * GitLab's `Tags::DestroyService` destroys the tag's release with the tag (a tag deleted by a git push
 * keeps it, and a tag of that name made later shows it again). For the tag deletion endpoint: the
 * events to append with the deletion's record, none when the tag has no release.
 */
export function removeTagRelease(
  projectId: number,
  s: ReleaseView,
  tagName: string,
  now: Date,
): Extract<ReleaseEvent, { type: 'ProjectReleaseRemoved' }>[] {
  if (!s.released) return [];
  return [{ type: 'ProjectReleaseRemoved', data: { projectId, tagName, at: now.toISOString() } }];
}
