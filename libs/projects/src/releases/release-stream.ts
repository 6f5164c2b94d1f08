import { createHash } from 'node:crypto';
import type { ReleaseEvent } from './release';
import { evolveReleaseLinks, type ReleaseLinkEvent, type ReleaseLinkState } from './release-link';

/*
 * One release and its asset links, on a stream of their own: `release-<project>-<tag>`, the tag named
 * by the first 24 hex digits of its name's SHA-256 (a tag name may be long and hold `/`). A project
 * with thousands of releases keeps a short project stream, and a release's command folds only that
 * release's history (see docs/architecture.md, "Streams that stay short"). Whether the project
 * exists, is archived or lets the actor write is asked of the read model before the decision
 * (`AuthorizedProject`, `ProjectQueries`), as every command of the project's context asks it.
 */

/** Every event of a release's stream. */
export type ReleaseStreamEvent = ReleaseEvent | ReleaseLinkEvent;

/** What a release's decisions read: does the tag have a release, and its links (for their uniqueness checks). */
export interface Release {
  released: boolean;
  links: ReleaseLinkState[];
}

/** The stream of the release of `tagName` in project `projectId`. */
export function releaseStream(projectId: number, tagName: string): string {
  return `release-${projectId}-${createHash('sha256').update(tagName, 'utf8').digest('hex').slice(0, 24)}`;
}

export const initial = (): Release => ({ released: false, links: [] });

/** A release's removal takes its links; a release made again later starts with none. */
export function evolve(s: Release, e: ReleaseStreamEvent): Release {
  switch (e.type) {
    case 'ProjectReleaseCreated':
    case 'ProjectReleaseUpdated':
    case 'ProjectReleaseChanged':
      return { ...s, released: true };
    case 'ProjectReleaseRemoved':
      return { released: false, links: evolveReleaseLinks(s.links, e) };
    case 'ProjectReleaseLinkAdded':
    case 'ProjectReleaseLinkChanged':
    case 'ProjectReleaseLinkRemoved':
      return { ...s, links: evolveReleaseLinks(s.links, e) };
  }
}

export const releaseDecider = { initial, evolve };
