import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { Module } from '@nestjs/common';
import { GitHttpMiddleware } from './http/git-http.middleware';
import { RepositoryCommitsController } from './http/repository-commits.controller';
import { RepositoryFilesController } from './http/repository-files.controller';
import { RepositoryReadsController } from './http/repository-reads.controller';
import { RepositoryTagsController } from './http/repository-tags.controller';

/** The HTTP side of repositories: git over smart HTTP (mounted by http-app as Express middleware) and the read API. */
@Module({
  imports: [UsersModule, ProjectsModule],
  controllers: [
    RepositoryReadsController,
    RepositoryCommitsController,
    RepositoryFilesController,
    RepositoryTagsController,
  ],
  providers: [GitHttpMiddleware],
  exports: [GitHttpMiddleware],
})
export class RepositoriesHttpModule {}
