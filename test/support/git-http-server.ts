import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalGitRepositories } from '../../libs/git/src/local-git-repositories';

/** A smart-HTTP git server on a free local port: `serve` answers each git request with its service. */
export async function gitHttpTestServer(
  serve: (req: IncomingMessage, res: ServerResponse, service: string) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const service = /\/(info\/refs|git-upload-pack|git-receive-pack)$/.exec(req.url?.split('?')[0] ?? '')?.[1];
    if (!service) return void res.writeHead(404).end();
    serve(req, res, service);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.git`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Counts the requests `repos` hands to git's own services instead of answering them itself. */
export function countHandedToGit(repos: LocalGitRepositories): { readonly count: number } {
  const counter = { count: 0 };
  const withGit = repos['serveHttpWithGit'].bind(repos);
  (repos as unknown as { serveHttpWithGit: typeof withGit }).serveHttpWithGit = (...args) => {
    counter.count++;
    withGit(...args);
  };
  return counter;
}
