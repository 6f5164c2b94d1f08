import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { Module } from '@nestjs/common';
import { GitHttpMiddleware } from './http/git-http.middleware';
import { RepositoryReadsController } from './http/repository-reads.controller';

/** The HTTP side of repositories: git over smart HTTP (mounted by http-app as Express middleware) and the read API. */
@Module({
  imports: [UsersModule, ProjectsModule],
  controllers: [RepositoryReadsController],
  providers: [GitHttpMiddleware],
  exports: [GitHttpMiddleware],
})
export class RepositoriesHttpModule {}
