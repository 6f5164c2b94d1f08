/** The web context: read-only HTML pages at GitLab's web paths, over the other contexts' queries and policy. */
export { WebModule } from './web.module';
/** The Express middleware that answers the pages (and passes every other request on). */
export { WebPages } from './web-pages';
