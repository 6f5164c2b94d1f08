import { GroupsModule } from '@app/groups';
import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { Module } from '@nestjs/common';
import { SessionCookies } from './session-cookies';
import { WebPages } from './web-pages';

/** The read-only web pages and their sign-in; the app mounts `WebPages.handle` before its routes. */
@Module({
  imports: [UsersModule, GroupsModule, ProjectsModule],
  providers: [WebPages, SessionCookies],
  exports: [WebPages],
})
export class WebModule {}
