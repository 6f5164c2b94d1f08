/** The repositories context: the repository API, git over smart HTTP and over SSH. */
export { RepositoriesHttpModule } from './repositories.module';
export { GitHttpMiddleware } from './http/git-http.middleware';
/** Git over SSH: the built-in server (started with the API when LODE_SSH_PORT is not 0). */
export { GitSshServer } from './ssh/git-ssh-server';
/** Records the pushes git applied that their own process could not record (it runs by itself in api processes). */
/** What git over HTTP and SSH share: lookup, policy, activity, the push gate and record. */
export { GitAccess } from './transport/git-access';
/** A blob's bytes as a download no browser renders as a page (the raw endpoints and the web pages' raw view). */
export { sendRawBlob } from './http/raw-response';
/** Anonymous raw blob and files API reads of public projects, answered from memory before the Nest pipeline. */
export { publicRepositoryReads } from './http/public-repository-reads';
/** A commit's archive, cached and in the git work budget (the archive endpoints and the web pages' `/-/archive/`). */
export { sendArchive } from './http/archive-response';
