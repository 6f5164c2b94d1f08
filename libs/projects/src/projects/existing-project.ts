import { NotFound } from '@app/platform';

/*
 * A project's state as one capability's decisions see it: absent, or present with the part that
 * capability keeps (its members, its shares, its fork relation...). The whole state is composed in
 * projects/project.ts, which imports the capabilities' parts; a part never imports the whole, so
 * each capability's decisions read only what they decide on, and `Project` is assignable to each view.
 */
export type ProjectWith<Part> = { exists: false } | ({ exists: true; projectId: number } & Part);

/** The project a decision acts on: GitLab answers 404 `Project Not Found` for one that is gone. */
export function existing<Part>(s: ProjectWith<Part>): Extract<ProjectWith<Part>, { exists: true }> {
  if (!s.exists) throw new NotFound('Project');
  return s as Extract<ProjectWith<Part>, { exists: true }>;
}
