/** The repositories context: git over smart HTTP. */
export { RepositoriesHttpModule } from './repositories.module';
export { GitHttpMiddleware } from './http/git-http.middleware';
