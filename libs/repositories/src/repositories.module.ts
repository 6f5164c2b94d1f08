import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { Module } from '@nestjs/common';
import { BranchProtectionController } from './http/branch-protection.controller';
import { GitHttpMiddleware } from './http/git-http.middleware';
import { RepositoryCommitsController } from './http/repository-commits.controller';
import { RepositoryFilesController } from './http/repository-files.controller';
import { RepositoryRefsController } from './http/repository-refs.controller';
import { RepositoryReadsController } from './http/repository-reads.controller';
import { RepositoryTagsController } from './http/repository-tags.controller';
import { ReleasesController } from './http/releases.controller';
import { ReleaseLinksController } from './http/release-links.controller';
import { GitSshServer } from './ssh/git-ssh-server';
import { GitAccess } from './transport/git-access';
import { RepositoryWritesController } from './http/repository-writes.controller';
import { RepositoryWrites } from './writes/repository-writes';
import { ProjectRepositoryController } from './http/project-repository.controller';

/**
 * The serving side of repositories: the read API, git over smart HTTP (mounted by http-app as Express
 * middleware) and git over SSH (its own listener, started with the API).
 */
@Module({
  imports: [UsersModule, ProjectsModule],
  controllers: [
    RepositoryReadsController,
    RepositoryCommitsController,
    RepositoryFilesController,
    RepositoryTagsController,
    BranchProtectionController,
    RepositoryWritesController,
    RepositoryRefsController,
    ProjectRepositoryController,
    ReleasesController,
    ReleaseLinksController,
  ],
  providers: [GitAccess, GitHttpMiddleware, GitSshServer, RepositoryWrites],
  exports: [GitHttpMiddleware, GitSshServer, GitAccess],
})
export class RepositoriesHttpModule {}
