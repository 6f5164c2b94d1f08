import { GitRepositories, projectRepo } from '@app/git';
import { Clock, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { Injectable } from '@nestjs/common';
import { PushRecorder } from '../pushes/push-recorder';
import { ZERO_SHA } from '../pushes/repository-push';
import { ProjectQueries } from './project.queries';

/**
 * GitLab's `initialize_with_readme` on `POST /projects` (Projects::CreateService#create_readme, 13.x):
 * one commit `Initial commit` adding `README.md` ("# <name>\n\n<description>") on the project's
 * default branch (the `default_branch` sent, GitLab 14.10+, else Lode's `master`), authored and
 * committed by the creator, in the request. The branch moves through the push's one path, as every
 * API write: the gate, the push written down first, one `RepositoryPushed` after, which names the
 * default branch and protects it as a first push does.
 */
@Injectable()
export class InitialReadme {
  constructor(
    private readonly git: GitRepositories,
    private readonly pushes: PushRecorder,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly clock: Clock,
  ) {}

  async write(projectId: number, actor: Actor, creatorId: number, branch: string): Promise<void> {
    const project = await this.projects.getVisible(projectId, actor);
    const repo = projectRepo(project.id);
    const creator = await this.users.get(creatorId);
    const person = { name: creator.name, email: creator.email, when: this.clock.now() };
    const sha = await this.git.writeCommit(repo, {
      parent: null,
      actions: [
        {
          action: 'create',
          filePath: 'README.md',
          content: Buffer.from(`# ${project.name}\n\n${project.description ?? ''}`),
        },
      ],
      message: 'Initial commit',
      author: person,
      committer: person,
    });
    const ref = `refs/heads/${branch}`;
    const session = this.pushes.session(
      project,
      actor,
      { accessLevel: project.access, isAdmin: actor.isAdmin },
      { viaApi: true },
    );
    const refusal = await session.check([{ ref, before: ZERO_SHA, after: sha, forced: false }]);
    if (refusal) throw new Error(`the README of project ${project.id} was refused: ${refusal}`);
    let moved: boolean | undefined;
    try {
      moved = await this.git.moveRef(repo, ref, ZERO_SHA, sha);
    } finally {
      await session.finish(moved);
    }
  }
}
