import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { Module } from '@nestjs/common';
import { GitHttpMiddleware } from './http/git-http.middleware';

/** The HTTP side of repositories: git over smart HTTP (mounted by http-app as Express middleware). */
@Module({
  imports: [UsersModule, ProjectsModule],
  providers: [GitHttpMiddleware],
  exports: [GitHttpMiddleware],
})
export class RepositoriesHttpModule {}
